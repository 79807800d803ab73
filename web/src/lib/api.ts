// The one API client of every page: same-origin JSON over the session cookie (never an API key).

export interface ErrorBody {
  error: string;
  code?: string;
  details?: { field?: string; message?: string }[];
  [key: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.error || `HTTP ${status}`);
  }
  /** The first field-level message, for a form to show next to its input. */
  field(name: string): string | undefined {
    return this.body.details?.find((d) => d.field === name || d.field === `/${name}`)?.message;
  }
}

export interface RequestOptions {
  /** Sent as `Idempotency-Key`, so a retried POST never has a second effect. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/** Headers every request of this page carries (the dashboard's "View test data" sets `x-muster-mode: test`). */
export const pageHeaders: Record<string, string> = {};

export async function api<T>(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...pageHeaders, ...opts.headers };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (opts.idempotencyKey) headers['idempotency-key'] = opts.idempotencyKey;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? null : JSON.stringify(body),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const text = await res.text();
  let parsed: unknown = undefined;
  if (text) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { error: text.slice(0, 200) };
    }
  }
  if (!res.ok) throw new ApiError(res.status, (parsed as ErrorBody | undefined) ?? { error: res.statusText });
  return parsed as T;
}

export const get = <T>(path: string, opts?: RequestOptions) => api<T>('GET', path, undefined, opts);
export const post = <T>(path: string, body?: unknown, opts?: RequestOptions) => api<T>('POST', path, body ?? {}, opts);
export const patch = <T>(path: string, body: unknown, opts?: RequestOptions) => api<T>('PATCH', path, body, opts);
export const del = <T>(path: string, opts?: RequestOptions) => api<T>('DELETE', path, undefined, opts);

/** A query string from the defined values of `params`. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** A random id for idempotency keys and client-side records. */
export function randomId(prefix = ''): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return prefix + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The message to show a person for any failure. */
export function messageOf(err: unknown): string {
  if (err instanceof ApiError) {
    const d = err.body.details?.[0];
    return d?.message ? `${err.body.error}: ${d.field ? `${d.field.replace(/^\//, '')} ` : ''}${d.message}` : err.body.error;
  }
  if (err instanceof TypeError) return 'Network error: check your connection and try again.';
  return err instanceof Error ? err.message : String(err);
}
