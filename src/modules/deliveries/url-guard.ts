import type { AppContext } from '../../context.js';
import { invalidField } from '../../lib/errors.js';
import { isPrivateAddress } from './ssrf.js';

/**
 * Whether a URL names a private target as written: an IP literal in a refused range (the URL
 * parser has already turned decimal, hex and short spellings into dotted form), or `localhost`
 * and its subdomains. Other names are not resolved here: what a name resolves to at save time
 * proves nothing (it can change), so the connect-time guard (`ssrf.ts`) stays the real check;
 * this one only refuses early what can never be delivered. An unparsable URL counts as private.
 */
export function plainlyPrivate(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return true;
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  // `localhost.` is `localhost` to a resolver.
  host = host.replace(/\.+$/, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host === '') return true;
  return /^[\d.]+$/.test(host) || host.includes(':') ? isPrivateAddress(host) : false;
}

/** A 422 on `field` when `url` is plainly private, unless MUSTER_ALLOW_PRIVATE_WEBHOOKS allows private targets. */
export function refusePlainlyPrivate(ctx: AppContext, field: string, url: string | null | undefined): void {
  if (!url || ctx.config.allowPrivateWebhooks) return;
  if (plainlyPrivate(url)) throw invalidField(field, 'must not point to a private, loopback or link-local address');
}
