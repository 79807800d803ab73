import { createHash, randomFillSync, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * Random bytes are drawn from the CSPRNG 4 KiB at a time and handed out once each, as Node's own
 * randomUUID does: each call into it costs about the same whatever its size (5.5 us for 18 bytes or
 * for 4 KiB alone on this VM; several times that in the server, where it was 7.6 % of the event loop's
 * time per incident creation, docs/benchmarks.md, "POST /v1/tickets"). A refill gets a new buffer, so a
 * byte handed out is never handed out again or overwritten under its holder.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/** `n` fresh random bytes: a view into the pool, to be used at once (turned into a string, copied). */
function randomView(n: number): Buffer {
  if (n > POOL_BYTES) return randomFillSync(Buffer.allocUnsafeSlow(n));
  if (offset + n > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafeSlow(POOL_BYTES));
    offset = 0;
  }
  const view = pool.subarray(offset, offset + n);
  offset += n;
  return view;
}

/** URL-safe random token carrying `bytes` bytes of entropy (32 bytes = 256 bits). */
export function randomToken(bytes = 32): string {
  return randomView(bytes).toString('base64url');
}

/**
 * A 32-character URL-safe token for a row's unique secret column: 8 characters of the time (ms,
 * base 36, so tokens made later sort later until the year 2059) and 24 of randomToken (144 random
 * bits, as unguessable as any secret here needs). Consecutive tokens land side by side in the column's
 * unique index, so an insert writes its right edge instead of a random page of it: at a million
 * rows that random page was one more page read and written per insert (docs/benchmarks.md,
 * "POST /v1/tickets"). It shows the row's creation time to the millisecond (a status page shows the day).
 */
export function timeOrderedToken(nowMs: number): string {
  return Math.floor(nowMs).toString(36).padStart(8, '0').slice(-8) + randomToken(18);
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A uniformly distributed six-digit code, leading zeros kept. */
export function sixDigitCode(): string {
  return randomInt(0, 1_000_000).toString().padStart(6, '0');
}
