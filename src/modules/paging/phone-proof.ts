import type { AppContext } from '../../context.js';
import { lockUsers } from '../../db/locks.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor } from '../../lib/actor.js';
import { MINUTE, iso } from '../../lib/clock.js';
import { invalidField } from '../../lib/errors.js';
// The emailed codes' machinery (six digits, five codes an hour, five attempts each, single use):
// the same code rules for a phone, under their own purpose. No public surface of auth yet.
import { issueCode, redeemCode } from '../auth/index.js';
// No public surface of deliveries yet: the phone alert decides the daily cap under the user's lock.
import { phoneAlert, queueDelivery } from '../deliveries/index.js';
// No public surface of users yet: every instance drops its cached copy of the person's row.
import { userRowChanged } from '../users/index.js';

/** A phone code lives as long as a magic code. */
export const PHONE_CODE_TTL_MS = 10 * MINUTE;
export const PHONE_CODE_TOPIC = 'auth.phone_code';

/**
 * The key of a person's phone codes (the codes table's address column): one per person, so the
 * five-an-hour limit counts every number they try, and a code is only ever the newest for its person.
 */
const codeKey = (userId: number) => `phone:${userId}`;

/**
 * A new number for a person, in the caller's transaction (PATCH /v1/auth/me): stored unproven, and
 * a six-digit code sent to it by SMS. The person is locked first (again, when the caller did), so
 * of two changes at once the newest code always belongs to the number stored last. More than five codes within the hour is
 * 422 on `phone` and changes nothing. The SMS counts toward the daily cap like any phone alert
 * (past the cap it is recorded as skipped, and the person asks again tomorrow).
 */
export async function sendPhoneCode(ctx: AppContext, tx: Tx, userId: number, phone: string): Promise<void> {
  await lockUsers(tx.db, ctx.database.dialect, [userId]);
  const code = await issueCode(ctx, tx, codeKey(userId), 'phone', PHONE_CODE_TTL_MS);
  if (code === null) throw invalidField('phone', 'too many codes were sent within the hour: try again later');
  const text = `${code} is your Muster code to confirm this phone number. It expires in 10 minutes.`;
  // Live whatever the credential: it is about the account (shared by both modes), like the emailed codes.
  const sms = await phoneAlert(ctx, tx, { userId, phone, topic: PHONE_CODE_TOPIC, mode: 'live', orgId: 0, payload: { body: text } });
  await queueDelivery(ctx, tx, { ...sms, orgId: null });
}

/** POST /v1/auth/me/phone/verify: the newest code proves the current number; a wrong, used or expired one is 422 on `code`. */
export async function verifyPhone(ctx: AppContext, actor: Actor, code: string): Promise<{ phone: string; phone_verified: true }> {
  const user = await ctx.db.selectFrom('users').select(['phone', 'phone_verified_at']).where('id', '=', actor.userId).executeTakeFirst();
  if (!user?.phone) throw invalidField('code', 'there is no phone number to confirm: set one with PATCH /v1/auth/me {phone}');
  if (user.phone_verified_at !== null) return { phone: user.phone, phone_verified: true };
  if (!(await redeemCode(ctx, codeKey(actor.userId), 'phone', code))) throw invalidField('code', 'is wrong or expired: ask for a new one by setting the number again');
  const now = iso(ctx.clock.now());
  // Only the number the code was sent to: a change since then sent a newer code and retired this one.
  await ctx.db.updateTable('users').set({ phone_verified_at: now, updated_at: now }).where('id', '=', actor.userId).where('phone', '=', user.phone).execute();
  userRowChanged(ctx, actor.userId);
  return { phone: user.phone, phone_verified: true };
}
