import type { FastifyBaseLogger } from 'fastify';
import { BlockedAddressError } from './ssrf.js';

/** What a refused address is called where its owner can read it (delivery logs, a calendar's error). */
export const REFUSED_ADDRESS = 'refused: not a public address';

/**
 * The words a delivery log or a calendar's `error` may show for a failed connection. A refused
 * address is named as refused without the address a name resolved to; a socket or TLS error
 * (`connect ECONNREFUSED 10.1.2.3:6379`, `getaddrinfo ENOTFOUND ...`) is "could not be reached":
 * its own text would tell whoever chose the URL what answers inside the network or on which port
 * (issue #31, F11). The detail goes to the server log. Muster's own messages (a deadline, a size
 * limit, an HTTP status) pass unchanged.
 */
export function reachReason(log: FastifyBaseLogger, err: unknown, who: string): string {
  if (err instanceof BlockedAddressError) {
    log.info({ address: err.address, who }, 'outgoing request refused: not a public address');
    return REFUSED_ADDRESS;
  }
  if (isSocketError(err)) {
    log.info({ err, who }, `${who} could not be reached`);
    return `${who} could not be reached`;
  }
  return err instanceof Error ? err.message : String(err);
}

/** An error raised by the network or TLS layer (it carries a code such as ECONNREFUSED), not by Muster. */
const isSocketError = (err: unknown) => err instanceof Error && typeof (err as { code?: unknown }).code === 'string';
