// The offline queue. Every signal except a beacon is written to IndexedDB BEFORE it is sent and
// removed only when the server has answered 201 (or refused it for good: then it is kept as
// failed, with the error, until discarded). Its client id is the Idempotency-Key, so a replay of a
// send whose answer was lost never has a second effect. One replay loop at a time (per browser,
// through the Web Locks API where there is one), started on load, on `online`, periodically and
// after each new signal.
import { openStore } from './idb';
import type { SignalBody } from './types';

export interface QueuedSignal {
  /** Client id: the Idempotency-Key of every attempt. */
  id: string;
  /** Who wrote it: it is only ever sent with that user's session. */
  user_id: number;
  body: SignalBody;
  /**
   * Where it goes when it is not a signal: an incident action of "My incidents" (acknowledge,
   * progress, resolve) rides the same outbox, with the same key and retry rules.
   */
  target?: { method: 'POST' | 'PATCH'; path: string; label: string; payload?: Record<string, unknown> };
  /** A capture's resized JPEG, until it is uploaded (then `body.image_url` is set). */
  photo?: Blob;
  status: 'waiting' | 'failed';
  error?: string;
  created_at: string;
  tries: number;
}

export interface QueueState {
  items: QueuedSignal[];
  /** The id being sent now, and its upload progress (0..1) when it is a photo. */
  sending: string | null;
  progress: number | null;
  /** The last reason the loop stopped with items left (offline, server busy, signed out). */
  blocked: string | null;
  /** The session ended: the queue waits until the user signs in again. */
  signedOut: boolean;
}

const RETRY_MS = 20_000;

/** What an attempt's answer means for its item. */
type Outcome = { kind: 'sent' } | { kind: 'retry'; reason: string } | { kind: 'failed'; error: string } | { kind: 'signed_out' };

function classify(status: number, body: unknown): Outcome {
  if (status >= 200 && status < 300) return { kind: 'sent' };
  if (status === 401) return { kind: 'signed_out' };
  // In progress elsewhere (409 with Retry-After), timeouts, rate limits and server errors pass.
  if (status === 409 || status === 408 || status === 429 || status >= 500) return { kind: 'retry', reason: `The server answered ${status}; retrying shortly.` };
  return { kind: 'failed', error: errorText(status, body) };
}

function errorText(status: number, body: unknown): string {
  const b = body as { error?: string; details?: { field?: string; message?: string }[] } | undefined;
  const d = b?.details?.[0];
  const base = b?.error ?? `HTTP ${status}`;
  return d?.message ? `${base}: ${d.field ? `${d.field.replace(/^\//, '')} ` : ''}${d.message}` : base;
}

interface Answer {
  status: number;
  body: unknown;
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return { error: text.slice(0, 200) };
  }
}

async function postSignal(item: QueuedSignal): Promise<Answer> {
  const res = await fetch(item.target?.path ?? '/v1/signals', {
    method: item.target?.method ?? 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'idempotency-key': item.id },
    body: JSON.stringify(item.target ? (item.target.payload ?? {}) : item.body),
  });
  return { status: res.status, body: parse(await res.text()) };
}

/** POST /v1/upload as multipart (field `file`) with upload progress; rejects on a network failure. */
export function uploadPhoto(photo: Blob, onProgress: (fraction: number) => void): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/v1/upload');
    xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => resolve({ status: xhr.status, body: parse(xhr.responseText) });
    xhr.onerror = xhr.ontimeout = () => reject(new TypeError('Network error'));
    const form = new FormData();
    form.append('file', photo, 'photo.jpg');
    xhr.send(form);
  });
}

export class Queue {
  private store = openStore<QueuedSignal>('muster-field', 'queue');
  private listeners = new Set<(s: QueueState) => void>();
  private running: Promise<void> | null = null;
  private again = false;
  private userId = 0;
  /** Called when the session now belongs to another user than the page was opened with. */
  onAccountChange?: (userId: number) => void;
  state: QueueState = { items: [], sending: null, progress: null, blocked: null, signedOut: false };

  subscribe(fn: (s: QueueState) => void): () => void {
    this.listeners.add(fn);
    fn(this.state);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<QueueState>) {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) fn(this.state);
  }

  private async reload() {
    const items = (await this.store.all()).sort((a, b) => a.created_at.localeCompare(b.created_at));
    this.set({ items });
    return items;
  }

  /** Loads the stored queue, replays it, and keeps replaying on `online` and every 20 s. */
  async start(userId: number) {
    this.userId = userId;
    await this.reload();
    window.addEventListener('online', () => void this.flush());
    setInterval(() => {
      if (navigator.onLine && this.state.items.some((i) => i.status === 'waiting')) void this.flush();
    }, RETRY_MS);
    void this.flush();
  }

  /** Stores the signal (durably) and then tries to send it. Resolves once it is stored. */
  async add(body: SignalBody, photo?: Blob, target?: QueuedSignal['target']): Promise<QueuedSignal> {
    const item: QueuedSignal = {
      ...(target ? { target } : {}),
      id: crypto.randomUUID ? crypto.randomUUID() : `sig-${Date.now()}-${Math.random().toString(36).slice(2)}`,
      user_id: this.userId,
      body: { ...body, recorded_at: new Date().toISOString() },
      status: 'waiting',
      created_at: new Date().toISOString(),
      tries: 0,
      ...(photo ? { photo } : {}),
    };
    await this.store.put(item);
    await this.reload();
    void this.flush();
    return item;
  }

  async discard(id: string) {
    await this.store.delete(id);
    await this.reload();
  }

  /** Puts a failed item back in line (after the user fixed what was wrong, e.g. signed in). */
  async retry(id: string) {
    const item = await this.store.get(id);
    if (item) await this.store.put({ ...item, status: 'waiting', error: undefined });
    await this.reload();
    void this.flush();
  }

  /** Replays the queue; a call while a replay runs makes it go round once more, never in parallel. */
  flush(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          const pass = () => this.pass();
          const locks = (navigator as Navigator & { locks?: LockManager }).locks;
          if (locks) await locks.request('muster-field-queue', pass);
          else await pass();
        } while (this.again);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** One pass over the waiting items, oldest first; stops at the first one that cannot go now. */
  private async pass(): Promise<void> {
    const items = await this.reload();
    this.set({ blocked: null });
    if (!items.some((i) => i.status === 'waiting')) return;
    // Whose session will the sends carry? Another account may have signed in meanwhile (in
    // another tab): its session must never send this account's signals.
    let me: Answer;
    try {
      const res = await fetch('/v1/auth/me', { credentials: 'same-origin', headers: { accept: 'application/json' } });
      me = { status: res.status, body: parse(await res.text()) };
    } catch {
      this.set({ blocked: navigator.onLine ? 'Cannot reach the server; retrying shortly.' : 'Offline: will send when the connection is back.' });
      return;
    }
    if (me.status === 401) return this.set({ signedOut: true, blocked: 'Signed out: sign in again to send.' });
    if (me.status !== 200) return this.set({ blocked: `The server answered ${me.status}; retrying shortly.` });
    const current = (me.body as { id: number }).id;
    if (current !== this.userId) {
      this.userId = current;
      this.onAccountChange?.(current);
    }
    for (const stale of items) {
      if (stale.status !== 'waiting') continue;
      // Another tab may have sent it meanwhile.
      const item = await this.store.get(stale.id);
      if (!item || item.status !== 'waiting') continue;
      if (item.user_id !== this.userId) {
        // Another account is signed in now: never send someone else's signal under it.
        await this.store.put({ ...item, status: 'failed', error: 'Saved while another account was signed in on this phone: sign in as that account to send it, or discard it.' });
        await this.reload();
        continue;
      }
      this.set({ sending: item.id, progress: item.photo ? 0 : null });
      let outcome: Outcome;
      try {
        outcome = await this.send(item);
      } catch {
        outcome = { kind: 'retry', reason: navigator.onLine ? 'Cannot reach the server; retrying shortly.' : 'Offline: will send when the connection is back.' };
      } finally {
        this.set({ sending: null, progress: null });
      }
      if (outcome.kind === 'sent') {
        await this.store.delete(item.id);
        this.set({ signedOut: false });
      } else if (outcome.kind === 'failed') {
        const current = (await this.store.get(item.id)) ?? item;
        await this.store.put({ ...current, status: 'failed', error: outcome.error });
      } else {
        const current = await this.store.get(item.id);
        if (current) await this.store.put({ ...current, tries: current.tries + 1 });
        await this.reload();
        this.set(outcome.kind === 'signed_out' ? { signedOut: true, blocked: 'Signed out: sign in again to send.' } : { blocked: outcome.reason });
        return;
      }
      await this.reload();
    }
  }

  private async send(item: QueuedSignal): Promise<Outcome> {
    if (item.photo && !item.body.image_url) {
      const up = await uploadPhoto(item.photo, (progress) => this.set({ progress }));
      const outcome = classify(up.status, up.body);
      if (outcome.kind !== 'sent') return outcome;
      const image_url = (up.body as { image_url?: string } | undefined)?.image_url;
      if (!image_url) return { kind: 'failed', error: 'The upload answered without an image address.' };
      // Kept before the signal is posted: a replay posts the same body (same key), never re-uploads.
      const { photo: _uploaded, ...rest } = item;
      item = { ...rest, body: { ...item.body, image_url } };
      await this.store.put(item);
    }
    const answer = await postSignal(item);
    return classify(answer.status, answer.body);
  }
}

export const queue = new Queue();
