import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Whether `signature` (the X-Twilio-Signature header) is Twilio's for a POST to `url` with these
 * form parameters, as Twilio documents it ("Secure webhooks"): HMAC-SHA1, keyed with the account's
 * auth token, over the full URL Twilio requested (with its query) followed by every POST parameter
 * sorted by name, each name immediately followed by its value; base64. Compared in constant time.
 */
export function validTwilioSignature(authToken: string, signature: string | undefined, url: string, params: Record<string, string>): boolean {
  if (!signature) return false;
  let data = url;
  for (const name of Object.keys(params).sort()) data += name + params[name];
  const expected = Buffer.from(createHmac('sha1', authToken).update(Buffer.from(data, 'utf8')).digest('base64'));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
