import assert from 'node:assert/strict';
import http from 'node:http';
import type { Headers, TestApp } from './helpers.js';

// Live streams need a real socket (app.inject cannot hold a response open), so stream tests listen
// on a random local port and read the stream with this small Server-Sent Events client.

/** One SSE frame as the client parsed it: an event (`id:`, `data:`) or a comment (`: heartbeat`). */
export interface SseFrame {
  id?: number;
  data?: unknown;
  comment?: string;
  /** The reconnection delay the server asked for (`retry:`), in milliseconds. */
  retry?: number;
  raw: string;
}

export interface StreamEvent {
  type: string;
  payload?: unknown;
  org_ids?: number[];
}

export const eventOf = (f: SseFrame): StreamEvent | undefined => f.data as StreamEvent | undefined;

/** A Server-Sent Events client on node:http that keeps every frame it receives. */
export class SseClient {
  readonly frames: SseFrame[] = [];
  /** Resolves once the connection is gone (closed by either side). */
  readonly ended: Promise<void>;
  private open = true;
  private buffer = '';
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly req: http.ClientRequest,
    readonly res: http.IncomingMessage,
  ) {
    req.on('error', () => {}); // a reset when either side closes is expected
    res.on('error', () => {});
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => this.receive(chunk));
    this.ended = new Promise((resolve) => {
      res.once('close', () => {
        this.open = false;
        this.notify();
        resolve();
      });
    });
  }

  get status(): number {
    return this.res.statusCode ?? 0;
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** The data of every event frame, in order (comments left out). */
  get events(): StreamEvent[] {
    return this.frames.flatMap((f) => (f.data === undefined ? [] : [f.data as StreamEvent]));
  }

  /** The first frame (received so far or later) that matches; rejects on timeout or when the stream ends first. */
  waitFor(predicate: (frame: SseFrame) => boolean, timeoutMs = 5000): Promise<SseFrame> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.frames.find(predicate);
        if (found) {
          done();
          resolve(found);
          return true;
        }
        if (!this.open) {
          done();
          reject(new Error(`stream ended before the frame arrived; got:\n${this.describe()}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no matching frame within ${timeoutMs} ms; got:\n${this.describe()}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      const listener = () => void check();
      if (!check()) this.listeners.add(listener);
    });
  }

  /** The first event of `type` whose payload passes `test`. */
  waitForEvent(type: string, test: (payload: Record<string, unknown>) => boolean = () => true, timeoutMs = 5000): Promise<SseFrame> {
    return this.waitFor((f) => eventOf(f)?.type === type && test(eventOf(f)?.payload as Record<string, unknown>), timeoutMs);
  }

  close(): Promise<void> {
    this.req.destroy();
    this.res.destroy();
    return this.ended;
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const raw = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      this.frames.push(parseFrame(raw));
    }
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private describe(): string {
    return this.frames.map((f) => f.raw.slice(0, 200)).join('\n') || '(nothing)';
  }
}

function parseFrame(raw: string): SseFrame {
  const f: SseFrame = { raw };
  const data: string[] = [];
  for (const line of raw.split(/\r?\n/)) {
    if (line.startsWith(':')) f.comment = line.slice(1).trim();
    else if (line.startsWith('id:')) f.id = Number(line.slice(3).trim());
    else if (line.startsWith('retry:')) f.retry = Number(line.slice(6).trim());
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  if (data.length > 0) f.data = JSON.parse(data.join('\n'));
  return f;
}

/** Opens a stream; resolves with the client once the response headers are in. */
export function connectSse(port: number, path: string, headers: Headers = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'GET', agent: false, headers: { accept: 'text/event-stream', ...headers } });
    req.once('response', (res) => resolve(new SseClient(req, res)));
    req.once('error', reject);
    req.end();
  });
}

/** Opens a stream that must be accepted: asserts 200, waits for its `connected` event, and keeps the client in `kept` (to close after). */
export async function openAccepted(port: number, path: string, headers: Headers, kept: { add(c: SseClient): unknown } | SseClient[]): Promise<SseClient> {
  const client = await connectSse(port, path, headers);
  if (Array.isArray(kept)) kept.push(client);
  else kept.add(client);
  assert.equal(client.status, 200, `${path}: ${client.status}`);
  await client.waitForEvent('connected');
  return client;
}

/**
 * The streams a test file opens on its app's port, all closed by `closeAll()` in its after hook:
 * `connect` only connects (for refusals and resumes), `accepted` asserts a 200, and `open` also
 * waits for the `connected` event (the stream is subscribed once it is out).
 */
export class StreamSet {
  readonly clients = new Set<SseClient>();

  constructor(
    private readonly port: () => number,
    private readonly defaultPath: string,
  ) {}

  async connect(headers: Headers, path = this.defaultPath): Promise<SseClient> {
    const client = await connectSse(this.port(), path, headers);
    this.clients.add(client);
    return client;
  }

  async accepted(headers: Headers, path = this.defaultPath): Promise<SseClient> {
    const client = await this.connect(headers, path);
    assert.equal(client.status, 200, `${path}: ${client.status}`);
    return client;
  }

  async open(headers: Headers, path = this.defaultPath): Promise<SseClient> {
    const client = await this.accepted(headers, path);
    await client.waitForEvent('connected');
    return client;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.clients].map((c) => c.close()));
  }
}

export function portOf(t: TestApp): number {
  const address = t.app.server.address();
  assert.ok(address && typeof address === 'object', 'the app listens on a TCP port');
  return address.port;
}

export async function listen(t: TestApp): Promise<number> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return portOf(t);
}

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`${what} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
