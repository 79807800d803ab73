import { createPublicKey } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { validationFailed, type FieldError } from '../../lib/errors.js';
import { refusePlainlyPrivate } from './url-guard.js';

export interface PushSubscriptionInput {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;
const decode = (s: string) => (BASE64URL.test(s) ? Buffer.from(s.replace(/=+$/, ''), 'base64url') : undefined);

/** An uncompressed P-256 point (0x04, X, Y: 65 bytes) that lies on the curve, as PushManager gives it. */
function isP256Point(b: Buffer): boolean {
  if (b.length !== 65 || b[0] !== 0x04) return false;
  try {
    createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: b.subarray(1, 33).toString('base64url'), y: b.subarray(33).toString('base64url') }, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
}

/**
 * What a subscription must be before it is stored (issue 14, item 4): keys a browser could have
 * made (RFC 8291: `p256dh` the client's P-256 public key, `auth` a 16-byte secret, both base64url),
 * and an endpoint that is not plainly private unless MUSTER_ALLOW_PRIVATE_WEBHOOKS allows it.
 * Without this, junk keys failed only at encryption time, on every delivery.
 */
export function checkPushSubscription(ctx: AppContext, s: PushSubscriptionInput): void {
  const errors: FieldError[] = [];
  const p256dh = decode(s.keys.p256dh);
  if (!p256dh || !isP256Point(p256dh)) errors.push({ field: 'keys.p256dh', message: 'must be an uncompressed P-256 public key (65 bytes, base64url)' });
  const auth = decode(s.keys.auth);
  if (!auth || auth.length !== 16) errors.push({ field: 'keys.auth', message: 'must be 16 bytes, base64url' });
  if (errors.length) throw validationFailed(errors);
  refusePlainlyPrivate(ctx, 'endpoint', s.endpoint);
}
