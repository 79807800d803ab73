import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

// Credentials of hosts' calendar accounts are stored encrypted (AES-256-GCM) under a key derived
// from the instance secret (HKDF), the one every instance already shares through `settings`:
// a copy of the table alone (a backup, a leaked dump of calendar_connections) reveals no password.

const keyOf = (instanceSecret: string) => Buffer.from(hkdfSync('sha256', instanceSecret, 'muster', 'calendar-credentials', 32));

/** `v1.<iv>.<tag>.<ciphertext>`, base64url parts; a new random IV every time. */
export function seal(instanceSecret: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(instanceSecret), iv);
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ct].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

/** The plaintext, or throws when the value was not sealed by this instance's key (or was altered). */
export function open(instanceSecret: string, sealed: string): string {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('unreadable stored credentials');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(instanceSecret), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}
