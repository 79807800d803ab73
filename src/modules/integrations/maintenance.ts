import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { flag, type DB } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { DAY, iso } from '../../lib/clock.js';
import { invalidField, notFound } from '../../lib/errors.js';
import { orgAccess } from '../orgs/index.js';
import type { IntegrationRow } from './integrations.repository.js';
import { activeWindows, deleteWindowRow, findWindow, insertWindow, listWindowRows, updateWindowRow, type WindowRow } from './maintenance.repository.js';
import type { CreateWindowBody, MaintenanceWindow, UpdateWindowBody } from './maintenance.schemas.js';

export type { WindowRow } from './maintenance.repository.js';

const MAX_WINDOW_MS = 31 * DAY;
/** Every instance's window cache reads the org's windows again (maintenance-cache.ts). */
const changed = (ctx: AppContext, orgId: number) => ctx.events.endAccess({ maintenanceOf: orgId });
const WRITE = { role: 'admin', write: true } as const;

/** Whether a window is active at `at` (an ISO instant): begun and not ended. */
export const activeAt = (w: WindowRow, at: string) => w.starts_at <= at && at < w.ends_at;

/** Whether a window covers an integration (all of its org's in its mode, or those it names). */
export const covers = (w: WindowRow, integrationId: number) => w.integration_ids === null || w.integration_ids.includes(integrationId);

/**
 * The active window covering an integration at `now` (the one ending last when several do), or
 * undefined. One indexed read of the org's windows in the integration's mode that have not ended.
 */
export async function coveringWindow(db: Kysely<DB>, integration: Pick<IntegrationRow, 'id' | 'org_id' | 'livemode'>, now: Date): Promise<WindowRow | undefined> {
  const rows = await activeWindows(db, integration.org_id, integration.livemode, iso(now));
  return rows.find((w) => covers(w, integration.id));
}

export function toWindow(w: WindowRow, now: Date): MaintenanceWindow {
  const at = iso(now);
  return {
    id: w.id,
    org_id: w.org_id,
    livemode: w.livemode === 1,
    start: w.starts_at,
    end: w.ends_at,
    description: w.description,
    integration_ids: w.integration_ids,
    active: activeAt(w, at),
    created_at: w.created_at,
    updated_at: w.updated_at,
  };
}

/** 422 with the field: an end not after its start, longer than 31 days, an integration not of this org and mode. */
async function checked(ctx: AppContext, orgId: number, livemode: 0 | 1, start: string, end: string, ids: number[] | null | undefined) {
  const s = Date.parse(start);
  const e = Date.parse(end);
  if (!(e > s)) throw invalidField('end', 'must be after start');
  if (e - s > MAX_WINDOW_MS) throw invalidField('end', 'is more than 31 days after start');
  if (ids) {
    const found = await ctx.db.selectFrom('integrations').select('id').where('org_id', '=', orgId).where('livemode', '=', livemode).where('revoked_at', 'is', null).where('id', 'in', ids).execute();
    const known = new Set(found.map((r) => r.id));
    const unknown = ids.filter((id) => !known.has(id));
    if (unknown.length > 0) throw invalidField('integration_ids', `${unknown.join(', ')}: not an integration of this org${livemode ? '' : ' in test mode'}`);
  }
  return { starts_at: iso(new Date(s)), ends_at: iso(new Date(e)), integration_ids: ids ?? null };
}

const modeOf = (actor: Actor) => flag(actor.mode === 'live');

export async function createWindow(ctx: AppContext, actor: Actor, orgSlug: string, input: CreateWindowBody): Promise<MaintenanceWindow> {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug }, WRITE);
  const livemode = modeOf(actor);
  const now = ctx.clock.now();
  const times = await checked(ctx, org.id, livemode, input.start, input.end, input.integration_ids);
  const row = await insertWindow(ctx.db, { org_id: org.id, livemode, ...times, description: input.description?.trim() || null, created_by: actor.userId, created_at: iso(now), updated_at: iso(now) });
  changed(ctx, org.id);
  return toWindow(row, now);
}

/** Current and upcoming windows (those ending after `from`, default now), or those overlapping [from, to). Any member reads them. */
export async function listWindows(ctx: AppContext, actor: Actor, orgSlug: string, q: { from?: string; to?: string }) {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug });
  const now = ctx.clock.now();
  const from = q.from ? iso(new Date(q.from)) : iso(now);
  const rows = await listWindowRows(ctx.db, org.id, modeOf(actor), from, q.to ? iso(new Date(q.to)) : undefined);
  return { maintenance_windows: rows.map((w) => toWindow(w, now)) };
}

async function managedWindow(ctx: AppContext, actor: Actor, orgSlug: string, id: number) {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug }, WRITE);
  const row = await findWindow(ctx.db, org.id, modeOf(actor), id);
  if (!row) throw notFound();
  return row;
}

export async function updateWindow(ctx: AppContext, actor: Actor, orgSlug: string, id: number, input: UpdateWindowBody): Promise<MaintenanceWindow> {
  const row = await managedWindow(ctx, actor, orgSlug, id);
  const now = ctx.clock.now();
  const ids = input.integration_ids === undefined ? row.integration_ids : input.integration_ids;
  const times = await checked(ctx, row.org_id, row.livemode, input.start ?? row.starts_at, input.end ?? row.ends_at, ids);
  const description = input.description === undefined ? row.description : input.description?.trim() || null;
  const after = await updateWindowRow(ctx.db, row.id, { ...times, description, updated_at: iso(now) });
  changed(ctx, row.org_id);
  return toWindow(after, now);
}

/** An active window ends now (kept, so the log of what it suppressed still names it); one not yet begun, or over, is deleted. */
export async function deleteWindow(ctx: AppContext, actor: Actor, orgSlug: string, id: number) {
  const row = await managedWindow(ctx, actor, orgSlug, id);
  const now = ctx.clock.now();
  const view = toWindow(row, now);
  if (view.active) {
    const after = await updateWindowRow(ctx.db, row.id, { ends_at: iso(now), updated_at: iso(now) });
    changed(ctx, row.org_id);
    return { ...toWindow(after, now), deleted: false };
  }
  await deleteWindowRow(ctx.db, row.id);
  changed(ctx, row.org_id);
  return { ...view, deleted: true };
}
