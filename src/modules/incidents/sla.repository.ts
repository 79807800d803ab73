import type { Kysely } from 'kysely';
import type { DB, Flag, Priority } from '../../db/schema.js';

export interface SlaMark {
  id: number;
  org_id: number;
  livemode: Flag;
  title: string;
  priority: Priority;
  sla_due_at: string;
  /** The assignee, else the creator. */
  recipient_id: number | null;
  recipient_email: string | null;
  /** The recipient's IANA time zone (their profile's), for the times in the email. */
  recipient_timezone: string | null;
}

/** Open incidents whose warning time (or due time, for `breach`) has come and whose mark is not set yet. */
export async function dueSlaMarks(db: Kysely<DB>, kind: 'warning' | 'breach', nowIso: string, limit: number): Promise<SlaMark[]> {
  let q = db
    .selectFrom('incidents as i')
    .leftJoin('users as a', 'a.id', 'i.assignee_id')
    .leftJoin('users as c', 'c.id', 'i.creator_id')
    .select(['i.id', 'i.org_id', 'i.livemode', 'i.title', 'i.priority', 'i.sla_due_at'])
    .select((eb) => [eb.fn.coalesce('a.id', 'c.id').as('recipient_id'), eb.fn.coalesce('a.email', 'c.email').as('recipient_email'), eb.fn.coalesce('a.timezone', 'c.timezone').as('recipient_timezone')])
    .where('i.status', 'in', ['open', 'in_progress']);
  q = kind === 'warning' ? q.where('i.sla_warned_at', 'is', null).where('i.sla_warn_at', '<=', nowIso) : q.where('i.sla_breached_at', 'is', null).where('i.sla_due_at', '<', nowIso);
  return q.orderBy('i.id').limit(limit).execute();
}

/** Sets the mark if nobody has; true for the one caller that set it. A breach also marks the warning as done. */
export async function claimSlaMark(db: Kysely<DB>, id: number, kind: 'warning' | 'breach', nowIso: string): Promise<boolean> {
  const r =
    kind === 'warning'
      ? await db.updateTable('incidents').set({ sla_warned_at: nowIso }).where('id', '=', id).where('sla_warned_at', 'is', null).executeTakeFirst()
      : await db
          .updateTable('incidents')
          .set((eb) => ({ sla_breached_at: nowIso, sla_warned_at: eb.fn.coalesce('sla_warned_at', eb.val(nowIso)) }))
          .where('id', '=', id)
          .where('sla_breached_at', 'is', null)
          .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
