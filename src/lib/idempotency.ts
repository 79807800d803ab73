import type { Tx } from '../db/transaction.js';

/**
 * Handed by the idempotency plugin to a service whose route takes an `Idempotency-Key`: the
 * service calls `record` inside its own transaction with the result it answers, so the stored
 * response commits (or rolls back) together with the effect.
 */
export interface EffectRecorder {
  record(tx: Tx, result: unknown): Promise<void>;
}

/** Records `result` when the request carries a key, and hands it back (the last line of a service's transaction). */
export async function recorded<T>(tx: Tx, recorder: EffectRecorder | null | undefined, result: T): Promise<T> {
  if (recorder) await recorder.record(tx, result);
  return result;
}

/** JSON with object keys sorted at every level: two bodies that mean the same give the same text. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
