// The device id names this phone (never a credential): `dev-` + 6 + `-` + 8 lowercase letters and
// digits, made once and kept in local storage under `muster-device-id`, sent as `meta.device_id`.
export const DEVICE_KEY = 'muster-device-id';
export const DEVICE_ID_PATTERN = /^dev-[a-z0-9]{6}-[a-z0-9]{8}$/;

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomChars(n: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(n * 2));
  let out = '';
  // Rejection sampling: 252 = 7 * 36, so every character is equally likely.
  for (const b of bytes) {
    if (b < 252) out += ALPHABET[b % 36];
    if (out.length === n) return out;
  }
  return out + randomChars(n - out.length);
}

export function newDeviceId(): string {
  return `dev-${randomChars(6)}-${randomChars(8)}`;
}

/** This device's id, made and stored on first use (a fresh one if storage held something else). */
export function deviceId(): string {
  try {
    const stored = localStorage.getItem(DEVICE_KEY);
    if (stored && DEVICE_ID_PATTERN.test(stored)) return stored;
    const id = newDeviceId();
    localStorage.setItem(DEVICE_KEY, id);
    return id;
  } catch {
    // Storage disabled (private mode on some browsers): an id for this page's life.
    return (memo ??= newDeviceId());
  }
}
let memo: string | undefined;
