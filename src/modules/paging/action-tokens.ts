import type { AppContext } from '../../context.js';
import { DAY } from '../../lib/clock.js';
import { signToken, verifyToken } from '../../lib/signing.js';
import type { PagingChannel } from './paging.tables.js';

/** How long a notification's actions work: a day, and never once the incident is resolved. */
export const ACTION_TTL_MS = DAY;
const PURPOSE = 'paging-action';
const CHANNELS: readonly string[] = ['push', 'email', 'sms', 'voice'];

export interface ActionClaims {
  notificationId: number;
  incidentId: number;
  userId: number;
  channel: PagingChannel;
  /** Epoch ms after which the token is refused. */
  expiresAt: number;
}

/**
 * The token of one notification: what it is for (notification, incident, person, channel) and
 * until when, with an HMAC under the instance secret (the one every instance shares, kept in the
 * database), so nothing per token is stored and an altered or forged one is refused.
 */
export function actionToken(ctx: AppContext, c: ActionClaims): string {
  return signToken(ctx.secret, PURPOSE, `${c.notificationId}.${c.incidentId}.${c.userId}.${c.channel}.${c.expiresAt.toString(36)}`);
}

/** The claims of a token made by this instance and not expired; undefined otherwise. */
export function readActionToken(ctx: AppContext, token: string): ActionClaims | undefined {
  if (token.length > 200) return undefined;
  const body = verifyToken(ctx.secret, PURPOSE, token);
  if (body === undefined) return undefined;
  const [n, i, u, channel, exp] = body.split('.');
  const claims = { notificationId: Number(n), incidentId: Number(i), userId: Number(u), channel: channel as PagingChannel, expiresAt: parseInt(exp ?? '', 36) };
  if (![claims.notificationId, claims.incidentId, claims.userId, claims.expiresAt].every(Number.isSafeInteger) || !CHANNELS.includes(claims.channel)) return undefined;
  return claims.expiresAt > ctx.clock.nowMs() ? claims : undefined;
}
