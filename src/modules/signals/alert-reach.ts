// Who an alert reaches, and how: the one rule both the alert itself (queueAlert) and the alert
// screen's preview (alertReach) follow, so the screen says exactly what will happen.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB, Mode } from '../../db/schema.js';
import type { Tx } from '../../db/transaction.js';
import type { Actor } from '../../lib/actor.js';
import { emailDelivery } from '../deliveries/index.js';
import { queueDeliveries, type Delivery } from '../deliveries/index.js';
import { usersWithPush } from '../deliveries/index.js';
import { replyAddress } from '../incidents/index.js';
import { targetOrg } from '../orgs/index.js';
import { listMembers, type MemberRow } from '../orgs/index.js';
import type { Signal } from './signals.schemas.js';

export type AlertChannel = 'push' | 'email';

/**
 * Every member of the org, each by one channel: Web Push when they have turned notifications on in
 * a browser, else email (until personal notification rules replace this), so an alert reaches
 * people who never opened Settings.
 */
export async function alertAudience(db: Kysely<DB>, orgId: number): Promise<{ member: MemberRow; channel: AlertChannel }[]> {
  const members = await listMembers(db, orgId);
  const push = await usersWithPush(
    db,
    members.map((m) => m.user_id),
  );
  return members.map((member) => ({ member, channel: push.has(member.user_id) ? 'push' : 'email' }));
}

/** The alert's deliveries, queued in its transaction (one statement). */
export async function queueAlert(ctx: AppContext, tx: Tx, s: Signal & { Id: number }, org: { id: number; name: string }, mode: Mode): Promise<void> {
  const incidentUrl = s.ticket_id === null ? `${ctx.config.publicUrl}/app/signals` : `${ctx.config.publicUrl}/app/incidents/${s.ticket_id}`;
  const push = { title: `Alert from ${s.user_name}`, body: s.note, signal_id: s.Id, org_id: org.id, incident_id: s.ticket_id };
  const note = (s.note ?? '').trim();
  const subject = `Alert from ${s.user_name} (${org.name}): ${note.split('\n', 1)[0]!.slice(0, 120)}`;
  const where = s.lat !== null && s.lng !== null ? `\nWhere: ${s.lat}, ${s.lng} (https://www.openstreetmap.org/?mlat=${s.lat}&mlon=${s.lng}#map=17/${s.lat}/${s.lng})` : '';
  const text =
    `${s.user_name} sent an alert to ${org.name}:\n\n${note}\n${where}\n\nOpen it: ${incidentUrl}\n\n` +
    `You get alerts by email because notifications are not turned on in any of your browsers. ` +
    `Turn them on in the field terminal (${ctx.config.publicUrl}/field) or in the dashboard's Settings to be told at once.`;
  const replyTo = s.ticket_id === null ? undefined : replyAddress(ctx, s.ticket_id);
  const deliveries: Delivery[] = (await alertAudience(tx.db, org.id)).map(({ member, channel }) =>
    channel === 'push'
      ? { kind: 'push', topic: 'signal.alert', mode, userId: member.user_id, orgId: org.id, recipient: `user:${member.user_id}`, payload: push }
      : emailDelivery(ctx.config, { to: member.email, subject, text, topic: 'signal.alert', userId: member.user_id, orgId: org.id, mode, replyTo }),
  );
  if (deliveries.length > 0) await queueDeliveries(ctx, tx, deliveries);
}

/**
 * What an alert to this org would do now, for the alert screen: how many members, how many by
 * push and by email, and the caller's own channel. In test mode nothing is sent (only recorded).
 */
export async function alertReach(ctx: AppContext, actor: Actor, orgId: number | undefined) {
  const { org } = await targetOrg(ctx, actor, orgId);
  const audience = await alertAudience(ctx.db, org.id);
  const push = audience.filter((a) => a.channel === 'push').length;
  return {
    org_id: org.id,
    org_name: org.name,
    livemode: actor.mode === 'live',
    members: audience.length,
    by_push: push,
    by_email: audience.length - push,
    you: audience.find((a) => a.member.user_id === actor.userId)?.channel ?? 'email',
  };
}
