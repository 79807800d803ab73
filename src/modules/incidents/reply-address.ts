import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../../context.js';

// `reply+<incident id>-<mac>@<INBOUND_EMAIL_DOMAIN>`: the MAC (HMAC-SHA256 under the instance
// secret, 80 bits, lower-case hex because mail systems may fold an address's case) ties a reply to
// its incident without storing a token, and cannot be forged for another incident.
const PURPOSE = 'incident-reply';

function mac(secret: string, id: number): string {
  return createHmac('sha256', secret).update(`${PURPOSE}:${id}`).digest('hex').slice(0, 20);
}

/** The Reply-To of every incident email, or undefined when inbound email is not configured. */
export function replyAddress(ctx: AppContext, incidentId: number): string | undefined {
  const domain = ctx.config.inboundEmailDomain;
  return domain ? `reply+${incidentId}-${mac(ctx.secret, incidentId)}@${domain}` : undefined;
}

/** The incident a local part `reply+<id>-<mac>` answers, or undefined when it is not one of ours. */
export function incidentOfReply(ctx: AppContext, local: string): number | undefined {
  const m = /^reply\+(\d{1,15})-([0-9a-f]{20})$/.exec(local.toLowerCase());
  if (!m) return undefined;
  const id = Number(m[1]);
  const given = Buffer.from(m[2]!);
  const expected = Buffer.from(mac(ctx.secret, id));
  return timingSafeEqual(given, expected) ? id : undefined;
}
