import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import type { PagingQuery } from '../../lib/schemas.js';
import { fetchWindow, pageOf } from '../../lib/paging.js';
import { orgAccess } from '../orgs/index.js';
import { listAudit as listRows } from './audit.repository.js';

/** The audit log of one org, in the caller's mode, newest first: for org admins and owners. */
export async function listAudit(ctx: AppContext, actor: Actor, q: PagingQuery & { org_id: number }) {
  const { org } = await orgAccess(ctx, actor, { id: q.org_id }, { role: 'admin' });
  const w = fetchWindow(q);
  const rows = await listRows(ctx.db, { orgIds: [org.id], mode: actor.mode }, w.limit, w.offset);
  const { items, ...page } = pageOf(rows, q, (r) => ({
    id: r.id,
    action: r.action,
    user_id: r.user_id,
    org_id: r.org_id,
    device_id: r.device_id,
    created_at: r.created_at,
    meta: r.meta,
  }));
  return { entries: items, ...page };
}
