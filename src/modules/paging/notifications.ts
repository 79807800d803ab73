import { eachLimited } from '../../lib/concurrency.js';
import type { Selectable } from 'kysely';
import type { AppContext } from '../../context.js';
import { ownedBy } from '../../db/scope.js';
import type { IncidentsTable, Mode } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import { MINUTE, iso } from '../../lib/clock.js';
// No public surface of deliveries yet: the outbox, the email and the phone alert (its daily cap).
import { queueEmail } from '../deliveries/index.js';
import { phoneAlert, queueDelivery, type Delivery } from '../deliveries/index.js';
import { recordTimeline } from '../incidents/index.js';
import { findMember } from '../orgs/index.js';
import { ACTION_TTL_MS, actionToken } from './action-tokens.js';
import type { PagingChannel, PagingNotificationsTable } from './paging.tables.js';
import { rulesOf } from './rules.js';

export type NotificationRow = Selectable<PagingNotificationsTable>;
type Incident = Pick<Selectable<IncidentsTable>, 'id' | 'org_id' | 'livemode' | 'title' | 'priority' | 'location_name' | 'status' | 'acknowledged_at'>;

const BATCH = 200;
const isDone = (status: string) => status === 'resolved' || status === 'closed';

/** Urgent and high incidents follow a person's `high` rules, normal and low ones their `low` rules. */
export const urgencyOf = (priority: string): 'high' | 'low' => (priority === 'urgent' || priority === 'high' ? 'high' : 'low');

/**
 * Pages a person for an incident, in the caller's transaction: one notification per rule of the
 * incident's urgency, due at now + the rule's delay. Nothing is sent here: the notification sweep
 * sends each when due, unless the incident was acknowledged or resolved first. Returns the rows.
 */
export async function pagePerson(ctx: AppContext, tx: Tx, incident: Pick<Incident, 'id' | 'org_id' | 'livemode' | 'priority'>, userId: number, distanceM: number | null = null): Promise<NotificationRow[]> {
  const rules = (await rulesOf(tx.db, userId))[urgencyOf(incident.priority)];
  if (rules.length === 0) return [];
  const now = ctx.clock.nowMs();
  const created = iso(new Date(now));
  const rows = rules.map((r) => ({
    incident_id: incident.id,
    org_id: incident.org_id,
    livemode: incident.livemode,
    user_id: userId,
    channel: r.channel,
    status: 'pending' as const,
    reason: null,
    due_at: iso(new Date(now + r.delay_minutes * MINUTE)),
    sent_at: null,
    created_at: created,
    updated_at: created,
    distance_m: distanceM,
  }));
  // A rule with no delay is sent right after the commit, not at the next sweep.
  if (rules.some((r) => r.delay_minutes === 0)) tx.onCommit(() => ctx.escalation.wake(ctx));
  return tx.db.insertInto('paging_notifications').values(rows).returningAll().execute();
}

/**
 * Cancels the notifications of an incident not yet sent (acknowledged, resolved or closed), in the
 * caller's transaction; `reason` says which. Answers how many.
 */
export async function cancelPending(ctx: AppContext, tx: Tx, incidentId: number, reason: string): Promise<number> {
  const now = iso(ctx.clock.now());
  const r = await tx.db.updateTable('paging_notifications').set({ status: 'cancelled', reason, updated_at: now }).where('incident_id', '=', incidentId).where('status', '=', 'pending').executeTakeFirst();
  return Number(r.numUpdatedRows);
}

const PRIORITY_WORDS: Record<string, string> = { urgent: 'Urgent', high: 'High priority', normal: 'Normal priority', low: 'Low priority' };

/** "Urgent incident 42, water main burst, Mill Road": what a call reads and an SMS starts with. */
export function incidentWords(i: Pick<Incident, 'id' | 'priority' | 'title' | 'location_name'>): string {
  return [`${PRIORITY_WORDS[i.priority] ?? i.priority} incident ${i.id}`, i.title, i.location_name].filter((x) => x !== null && x !== '').join(', ');
}

/** "350 m from you", "1.2 km from you": how far a person paged by a `nearest` target was. */
export function distanceWords(m: number): string {
  return m < 1000 ? `${Math.round(m)} m from you` : `${(m / 1000).toFixed(1)} km from you`;
}

/** The URLs of a call: its TwiML (which Twilio fetches when answered) and its status callback. */
export function voiceUrls(ctx: AppContext, token: string) {
  const base = `${ctx.config.publicUrl}/v1/providers/twilio/voice?token=${encodeURIComponent(token)}`;
  return { url: base, statusCallback: `${base}&event=status` };
}

interface Person {
  id: number;
  email: string;
  phone: string | null;
  phone_verified_at: string | null;
}

/** What to queue for one due notification, or why it is skipped. */
async function deliveryOf(ctx: AppContext, tx: Tx, n: NotificationRow, incident: Incident, person: Person): Promise<{ delivery?: Delivery; email?: Parameters<typeof queueEmail>[2]; skip?: string }> {
  const mode: Mode = n.livemode === 1 ? 'live' : 'test';
  const token = actionToken(ctx, { notificationId: n.id, incidentId: incident.id, userId: person.id, channel: n.channel, expiresAt: ctx.clock.nowMs() + ACTION_TTL_MS });
  const far = n.distance_m === null || n.distance_m === undefined ? null : distanceWords(n.distance_m);
  const words = far === null ? incidentWords(incident) : `${incidentWords(incident)} (${far})`;
  const topic = 'incident.paged';
  const base = { topic, mode, userId: person.id, orgId: incident.org_id };
  const channel: PagingChannel = n.channel;
  if (channel === 'push') {
    const subs = await tx.db.selectFrom('push_subscriptions').select('id').$call(ownedBy({ userId: person.id, mode }, 'push_subscriptions')).limit(1).execute();
    if (subs.length === 0) return { skip: 'no push subscription' };
    const payload = {
      title: `${PRIORITY_WORDS[incident.priority] ?? incident.priority} incident ${incident.id}`,
      body: [incident.title, incident.location_name, far].filter(Boolean).join(', '),
      url: `${ctx.config.publicUrl}/field#incident-${incident.id}`,
      incident_id: incident.id,
      // The service worker posts the action chosen to action_url ({action}): no session needed.
      action_url: `${ctx.config.publicUrl}/v1/actions/${token}`,
      actions: [
        { action: 'acknowledge', title: 'Acknowledge' },
        { action: 'resolve', title: 'Resolve' },
      ],
    };
    return { delivery: { ...base, kind: 'push', recipient: `user:${person.id}`, payload } };
  }
  if (channel === 'email') {
    const link = `${ctx.config.publicUrl}/actions/${token}`;
    const text = `${words}.\n\nAcknowledge or resolve it here (no sign-in needed; the link works for 24 hours):\n${link}\n\nOr open it: ${ctx.config.publicUrl}/app/incidents/${incident.id}`;
    return { email: { ...base, to: person.email, subject: `${words}`.slice(0, 200), text } };
  }
  if (person.phone === null) return { skip: 'no phone number' };
  if (person.phone_verified_at === null) return { skip: 'phone not verified' };
  if (channel === 'voice' && !ctx.config.twilio) return { skip: 'voice calls need Twilio (TWILIO_*)' };
  const payload =
    channel === 'sms'
      ? { body: `${words}. Reply 4 to acknowledge, 6 to resolve (or "4 ${incident.id}", "6 ${incident.id}").` }
      : { call: voiceUrls(ctx, token), body: words };
  const alert = await phoneAlert(ctx, tx, { userId: person.id, phone: person.phone, topic, mode, orgId: incident.org_id, payload });
  return alert.skip ? { skip: alert.skip } : { delivery: alert };
}

/**
 * How many incidents a paging run works on at once (escalation steps, then notifications). One after another, a
 * run's pace was its round trips': on PostgreSQL about 30 per alert, about 100 alerts a second however idle the
 * database (`npx tsx bench/profile-paging.ts --pg`); side by side they use the pool's connections, and on SQLite
 * their transactions share a COMMIT (db/group-commit.ts). Each step and notification is still claimed by its
 * conditional update; one incident's notifications still go in their order.
 */
export const PARALLEL_RUNS = 4;

/**
 * Sends the notifications that are due, each exactly once across instances: in one transaction per
 * notification, a conditional update takes it from `pending` (only one sweep can), and its delivery
 * is queued in the outbox in the same transaction. One whose incident was acknowledged, resolved or
 * closed meanwhile is cancelled instead; one sent or skipped is on the timeline as `notified {user_id,
 * channel, outcome, reason?}`; one the person cannot receive (no push subscription, no
 * proven phone, the daily cap) is recorded as `skipped` with the reason. Up to PARALLEL_RUNS incidents'
 * notifications at once, each incident's in order (a failure of one is thrown once the others are done). Answers how
 * many it settled.
 */
export async function sendDueNotifications(ctx: AppContext): Promise<number> {
  const now = iso(ctx.clock.now());
  const due = await ctx.db
    .selectFrom('paging_notifications')
    .selectAll()
    .where('status', '=', 'pending')
    .where('due_at', '<=', now)
    .orderBy('due_at')
    .orderBy('id')
    .limit(BATCH)
    .execute();
  let settled = 0;
  // One incident's notifications in their order (its timeline reads as they were due); incidents side by side.
  const byIncident = new Map<number, typeof due>();
  for (const n of due) {
    const list = byIncident.get(n.incident_id);
    if (list) list.push(n);
    else byIncident.set(n.incident_id, [n]);
  }
  const sendOne = (n: (typeof due)[number]) =>
    ctx.transaction(async (tx) => {
      const incident = await tx.db
        .selectFrom('incidents')
        .select(['id', 'org_id', 'livemode', 'title', 'priority', 'location_name', 'status', 'acknowledged_at'])
        .where('id', '=', n.incident_id)
        .executeTakeFirst();
      const settle = async (status: 'sent' | 'skipped' | 'cancelled', reason: string | null) => {
        // Its own time, not the run's: a run settles up to a batch, one transaction each.
        const at = iso(ctx.clock.now());
        const r = await tx.db
          .updateTable('paging_notifications')
          .set({ status, reason, sent_at: status === 'sent' ? at : null, updated_at: at })
          .where('id', '=', n.id)
          .where('status', '=', 'pending')
          .executeTakeFirst();
        return Number(r.numUpdatedRows) === 1;
      };
      if (!incident || isDone(incident.status) || incident.acknowledged_at !== null) {
        if (await settle('cancelled', !incident || isDone(incident.status) ? 'resolved' : 'acknowledged')) settled += 1;
        return;
      }
      const person = await tx.db.selectFrom('users').select(['id', 'email', 'phone', 'phone_verified_at']).where('id', '=', n.user_id).executeTakeFirst();
      if (!person) return;
      // Access ends everywhere: someone who left the org since the page is not reached for its incidents.
      const d = (await findMember(tx.db, incident.org_id, person.id)) ? await deliveryOf(ctx, tx, n, incident, person) : { skip: 'no longer a member of the org' };
      // Claimed first: a concurrent sweep that lost sends nothing.
      if (!(await settle(d.skip ? 'skipped' : 'sent', d.skip ?? null))) return;
      settled += 1;
      if (d.delivery) await queueDelivery(ctx, tx, d.delivery);
      if (d.email) await queueEmail(ctx, tx, d.email);
      await recordTimeline(ctx, tx, incident, 'notified', null, { user_id: n.user_id, channel: n.channel, outcome: d.skip ? 'skipped' : 'sent', ...(d.skip ? { reason: d.skip } : {}) });
    });
  await eachLimited([...byIncident.values()], PARALLEL_RUNS, async (list) => {
    for (const n of list) await sendOne(n);
  });
  return settled;
}
