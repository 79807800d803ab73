import type { AppContext } from '../../context.js';
import { DAY, iso } from '../../lib/clock.js';
import { findMember } from '../orgs/index.js';
import { recordTimeline } from '../incidents/index.js';
import { escapeHtml } from '../../lib/html.js';
import { act, targetOf, type ActionOutcome, type PageAction, type Target } from './actions.js';
import { distanceWords, incidentWords } from './notifications.js';

// Twilio's webhooks (its requests are checked by the routes: X-Twilio-Signature). Every answer is
// TwiML; a request Muster cannot place (an unknown call or number) answers the empty
// <Response/>, never an error, so Twilio neither retries nor reads an error to the person.

export const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';
const twiml = (inner: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${inner}</Response>`;
const say = (text: string) => `<Say>${escapeHtml(text)}</Say>`;

/** How many times a call reads the incident again without an answer before it says goodbye. */
const MAX_ROUNDS = 3;
const KEYS: Record<string, PageAction> = { '4': 'acknowledge', '6': 'resolve' };

const OUTCOME_WORDS: Record<ActionOutcome, string> = {
  acknowledged: 'acknowledged: it is yours',
  already_acknowledged: 'already acknowledged',
  resolved: 'resolved',
  already_resolved: 'already resolved',
};

/**
 * A call's TwiML (the URL carries the notification's action token): the incident read out and a
 * <Gather> of one digit that posts back here; 4 acknowledges, 6 resolves, anything else (or
 * silence) reads it again, up to three times.
 */
export async function voiceTwiml(ctx: AppContext, token: string, digits: string | undefined, round: number): Promise<string> {
  const target = await targetOf(ctx, token);
  if (!target) return EMPTY_TWIML;
  const action = digits === undefined ? undefined : KEYS[digits.trim()];
  if (action) {
    const { outcome } = await act(ctx, target, action);
    return twiml(`${say(`Incident ${target.incident.id} ${OUTCOME_WORDS[outcome]}. Goodbye.`)}<Hangup/>`);
  }
  const { incident } = target;
  if (incident.status === 'resolved' || incident.status === 'closed') return twiml(`${say(`Incident ${incident.id} is already resolved. Goodbye.`)}<Hangup/>`);
  if (round > MAX_ROUNDS) return twiml(`${say('No key was pressed. Goodbye.')}<Hangup/>`);
  const again = `${voiceUrl(ctx, token)}&round=${round + 1}`;
  const sorry = digits === undefined ? '' : 'Sorry, that key does nothing. ';
  const far = target.distanceM === null || target.distanceM === undefined ? '' : ` (${distanceWords(target.distanceM)})`;
  const prompt = `${sorry}${incidentWords(incident)}${far}. Press 4 to acknowledge, or 6 to resolve.`;
  return twiml(`<Gather numDigits="1" timeout="8" method="POST" action="${escapeHtml(again)}">${say(prompt)}</Gather><Redirect method="POST">${escapeHtml(again)}</Redirect>`);
}

const voiceUrl = (ctx: AppContext, token: string) => `${ctx.config.publicUrl}/v1/providers/twilio/voice?token=${encodeURIComponent(token)}`;

/**
 * A call's status callback: recorded against its notification (`paging_call_events`); a call that
 * was busy, not answered or failed also marks the notification `failed` with the reason.
 */
export async function recordCallStatus(ctx: AppContext, token: string, callSid: string, status: string): Promise<void> {
  const target = await targetOf(ctx, token);
  if (!target || callSid === '' || status === '') return;
  const now = iso(ctx.clock.now());
  await ctx.transaction(async (tx) => {
    const { db } = tx;
    await db.insertInto('paging_call_events').values({ notification_id: target.claims.notificationId, call_sid: callSid.slice(0, 64), status: status.slice(0, 32), created_at: now }).execute();
    if (['busy', 'no-answer', 'failed', 'canceled'].includes(status)) {
      const r = await db.updateTable('paging_notifications').set({ status: 'failed', reason: `call ${status}`, updated_at: now }).where('id', '=', target.claims.notificationId).where('status', '=', 'sent').executeTakeFirst();
      // Once per notification (Twilio may repeat a callback): the update above matched only while it was `sent`.
      if (Number(r.numUpdatedRows) === 1) await recordTimeline(ctx, tx, target.incident, 'notified', null, { user_id: target.claims.userId, channel: 'voice', outcome: 'failed', reason: `call ${status}` });
    }
  });
}

const REPLY = /^\s*([46])(?:\s+#?(\d{1,10}))?\s*$/;

/**
 * An SMS to Muster's number: "4" acknowledges and "6" resolves the sender's latest open page; "4 42"
 * names incident 42 among several. The sender is whoever has the number proven; an unknown number
 * gets the empty TwiML. The answer (an SMS back) says which incident and what happened.
 */
export async function smsReply(ctx: AppContext, from: string, body: string): Promise<string> {
  const people = await ctx.db.selectFrom('users').select('id').where('phone', '=', from).where('phone_verified_at', 'is not', null).execute();
  if (people.length === 0) return EMPTY_TWIML;
  const message = (text: string) => twiml(`<Message>${escapeHtml(text)}</Message>`);
  const m = REPLY.exec(body);
  if (!m) return message('Reply 4 to acknowledge or 6 to resolve your latest page; add the incident number ("4 42") to choose another.');
  const action = KEYS[m[1]!]!;
  const named = m[2] === undefined ? undefined : Number(m[2]);
  // The sender's pages of open incidents, latest page first (one token per page: its newest SMS notification, else any).
  const pages = await ctx.db
    .selectFrom('paging_notifications as n')
    .innerJoin('incidents as i', 'i.id', 'n.incident_id')
    .select(['n.incident_id', (eb) => eb.fn.max('n.id').as('last')])
    .where('n.user_id', 'in', people.map((p) => p.id))
    .where('i.status', 'in', ['open', 'in_progress'])
    // As long as a notification's token works: a day.
    .where('n.created_at', '>=', iso(new Date(ctx.clock.nowMs() - DAY)))
    .groupBy('n.incident_id')
    .orderBy('last', 'desc')
    .limit(50)
    .execute();
  if (pages.length === 0) return message('You have no open pages.');
  const chosen = named === undefined ? pages[0]! : pages.find((p) => Number(p.incident_id) === named);
  if (!chosen) return message(`You have no open page for incident ${named}. Open pages: ${pages.map((p) => p.incident_id).join(', ')}.`);
  const target = await tokenlessTarget(ctx, Number(chosen.last));
  if (!target) return EMPTY_TWIML;
  const { outcome, incident } = await act(ctx, target, action);
  const others = pages.filter((p) => p !== chosen).map((p) => p.incident_id);
  const rest = named === undefined && others.length > 0 ? ` Other open pages: ${others.join(', ')} (reply "4 ${String(others[0])}" for one of them).` : '';
  return message(`Incident ${incident.id} (${incident.title}) ${OUTCOME_WORDS[outcome]}.${rest}`);
}

/** The target of a notification the SMS reply chose (its sender proved the number): as a token would name it, by SMS. */
async function tokenlessTarget(ctx: AppContext, notificationId: number): Promise<Target | undefined> {
  const n = await ctx.db.selectFrom('paging_notifications').select(['id', 'incident_id', 'user_id']).where('id', '=', notificationId).executeTakeFirst();
  if (!n) return undefined;
  const incident = await ctx.db.selectFrom('incidents').selectAll().where('id', '=', n.incident_id).executeTakeFirst();
  if (!incident || !(await findMember(ctx.db, incident.org_id, n.user_id))) return undefined;
  return { claims: { notificationId: n.id, incidentId: incident.id, userId: n.user_id, channel: 'sms', expiresAt: Number.MAX_SAFE_INTEGER }, incident };
}
