// The Muster API client: openapi-fetch over the types generated from the API description.
//
//   const muster = createMusterClient({ baseUrl: 'https://muster.example.org', apiKey: 'sk_live_...' });
//   const { data, error } = await muster.POST('/v1/incidents', { body: { title: 'Gas leak', priority: 'urgent' } });
//
// Every path, parameter, body and answer is typed from schema.ts (`npm run client:generate`).
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './schema.js';

export type * from './schema.js';
export type MusterClient = Client<paths>;

export interface MusterClientOptions extends ClientOptions {
  /** An API key (`sk_live_...` or `sk_test_...`), sent as `x-api-key`. Leave out for public routes or a browser session. */
  apiKey?: string;
}

export function createMusterClient({ apiKey, headers, ...options }: MusterClientOptions = {}): MusterClient {
  const auth: Record<string, string> = apiKey ? { 'x-api-key': apiKey } : {};
  return createClient<paths>({ ...options, headers: { ...auth, ...(headers as Record<string, string> | undefined) } });
}

/**
 * The events of a live stream (`GET /v1/incidents/stream`, `/v1/signals/stream`, asked for with
 * `parseAs: 'stream'`): each `data:` line parsed as JSON, until the stream ends or `signal` aborts.
 */
export async function* streamEvents<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<T & { id?: string }, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let id: string | undefined;
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('id:')) id = line.slice(3).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0) yield { ...(JSON.parse(data.join('\n')) as T), ...(id === undefined ? {} : { id }) };
      }
    }
  } finally {
    reader.releaseLock();
  }
}
