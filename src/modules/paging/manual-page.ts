import { Type, type Static } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { conflict, forbidden, invalidField, validationFailed, type FieldError } from '../../lib/errors.js';
import { findVisible } from '../incidents/index.js';
import { liveScheduleIds, whoIsOnCall } from '../oncall/index.js';
import { atLeast, orgAccess } from '../orgs/index.js';
import { listMembers } from '../orgs/index.js';
import { pageOne } from './walk.js';

const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

export const PageBody = Type.Object(
  {
    user_ids: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 20, description: 'members of the org' })),
    schedule_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'pages whoever is on call in it now' })),
  },
  { minProperties: 1 },
);
export type PageBody = Static<typeof PageBody>;

export const PageResult = Type.Object(
  {
    paged: Type.Array(
      Type.Object({
        user_id: Type.Integer(),
        notifications: Type.Array(Type.Object({ channel: Type.String(), due_at: Type.String() }), { description: "one per rule of the incident's urgency; none when the person's rules for it are empty" }),
      }),
    ),
  },
  { title: 'PageResult' },
);

/**
 * POST /v1/tickets/:id/page: adds responders by hand (an admin or owner of the org, or the
 * assignee). Each person named, and whoever is on call now in the schedule named, is paged by their
 * own rules, with a `paged {user_id, level: null, loop: null, target}` timeline event. A person
 * named twice (or named and on call) is paged once.
 */
export async function pageByHand(ctx: AppContext, actor: Actor, incidentId: number, input: PageBody) {
  const incident = await findVisible(ctx, actor, incidentId);
  const { role } = await orgAccess(ctx, actor, { id: incident.org_id }, { write: true });
  if (incident.assignee_id !== actor.userId && !atLeast(role, 'admin')) throw forbidden();
  if (incident.status === 'resolved' || incident.status === 'closed') throw conflict('The incident is resolved: reopen it to page someone');
  const members = new Set((await listMembers(ctx.db, incident.org_id)).map((m) => m.user_id));
  const details: FieldError[] = [];
  (input.user_ids ?? []).forEach((id, i) => {
    if (!members.has(id)) details.push({ field: `user_ids.${i}`, message: 'is not a member of this org' });
  });
  if (details.length > 0) throw validationFailed(details);
  const targets = new Map<number, { type: 'user' | 'schedule'; id: number }>();
  for (const id of input.user_ids ?? []) targets.set(id, { type: 'user', id });
  if (input.schedule_id !== undefined) {
    if (!(await liveScheduleIds(ctx, incident.org_id)).has(input.schedule_id)) throw invalidField('schedule_id', 'is not a schedule of this org');
    const shift = await whoIsOnCall(ctx, incident.org_id, input.schedule_id, ctx.clock.nowMs());
    if (!shift) throw invalidField('schedule_id', 'nobody is on call in it now');
    if (!targets.has(shift.userId)) targets.set(shift.userId, { type: 'schedule', id: input.schedule_id });
  }
  return ctx.transaction(async (tx) => {
    const paged = [];
    for (const [userId, target] of targets) {
      const rows = await pageOne(ctx, tx, incident, userId, { level: null, loop: null, target }, actor.userId);
      paged.push({ user_id: userId, notifications: rows.map((r) => ({ channel: r.channel, due_at: r.due_at })) });
    }
    return { paged };
  });
}
