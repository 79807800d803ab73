import type { AppContext } from '../../context.js';
import { flag, type Flag } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { conflict, invalidField, notFound } from '../../lib/errors.js';
import { orgAccess } from '../orgs/index.js';
import { ringProblem } from './geometry.js';
import { countSites, deleteSite as deleteRow, findSite, insertSite, sitesOf, updateSite as updateRow, type Polygon, type SiteRow } from './sites.repository.js';
import type { CreateSiteBody, Site, UpdateSiteBody } from './sites.schemas.js';

const WRITE = { role: 'admin', write: true } as const;
/** Sites an org keeps per mode. */
export const MAX_SITES = 1000;
export const MIN_RADIUS_M = 10;
export const MAX_RADIUS_M = 50_000;

const modeOf = (actor: Actor): Flag => flag(actor.mode === 'live');

export function toSite(s: SiteRow): Site {
  return {
    id: s.id,
    org_id: s.org_id,
    livemode: s.livemode === 1,
    name: s.name,
    kind: s.kind,
    lat: s.lat,
    lng: s.lng,
    radius_m: s.radius_m,
    area: s.area,
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}

type Shape = { kind: 'circle'; lat: number; lng: number; radius_m: number; area: null } | { kind: 'polygon'; lat: null; lng: null; radius_m: null; area: Polygon };

/** 422 with the field: a circle's centre and radius out of range, a polygon that is not a simple closed ring, both or neither. */
function shapeOf(input: { lat?: number | undefined; lng?: number | undefined; radius_m?: number | undefined; area?: { type: 'Polygon'; coordinates: number[][][] } | undefined }, before?: SiteRow): Shape {
  const circleGiven = input.lat !== undefined || input.lng !== undefined || input.radius_m !== undefined;
  if (input.area !== undefined) {
    if (circleGiven) throw invalidField('area', 'give either lat, lng and radius_m (a circle) or area (a polygon), not both');
    const problem = ringProblem(input.area.coordinates[0]!);
    if (problem) throw invalidField('area.coordinates', problem);
    const ring = input.area.coordinates[0]!.map(([lng, lat]) => [lng!, lat!] as [number, number]);
    return { kind: 'polygon', lat: null, lng: null, radius_m: null, area: { type: 'Polygon', coordinates: [ring] } };
  }
  const base = before?.kind === 'circle' ? before : undefined;
  const lat = input.lat ?? base?.lat ?? undefined;
  const lng = input.lng ?? base?.lng ?? undefined;
  const radius = input.radius_m ?? base?.radius_m ?? undefined;
  if (lat === undefined) throw invalidField('lat', 'required for a circle (or give area)');
  if (lng === undefined) throw invalidField('lng', 'required for a circle (or give area)');
  if (radius === undefined) throw invalidField('radius_m', 'required for a circle (or give area)');
  if (!(lat >= -90 && lat <= 90)) throw invalidField('lat', 'must be between -90 and 90');
  if (!(lng >= -180 && lng <= 180)) throw invalidField('lng', 'must be between -180 and 180');
  if (!(radius >= MIN_RADIUS_M && radius <= MAX_RADIUS_M)) throw invalidField('radius_m', `must be between ${MIN_RADIUS_M} and ${MAX_RADIUS_M} metres`);
  return { kind: 'circle', lat, lng, radius_m: radius, area: null };
}

/** Every instance's site cache reads the org's sites again (modules/sites cache.ts). */
const changed = (ctx: AppContext, orgId: number) => ctx.events.endAccess({ sitesOf: orgId });

export async function createSite(ctx: AppContext, actor: Actor, orgSlug: string, input: CreateSiteBody): Promise<Site> {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug }, WRITE);
  const livemode = modeOf(actor);
  const shape = shapeOf(input);
  const name = input.name.trim();
  if (name === '') throw invalidField('name', 'must not be blank');
  if ((await countSites(ctx.db, org.id, livemode)) >= MAX_SITES) throw conflict(`an org has at most ${MAX_SITES} sites per mode`);
  const now = iso(ctx.clock.now());
  const row = await insertSite(ctx.db, { org_id: org.id, livemode, name, ...shape, created_by: actor.userId, created_at: now, updated_at: now });
  changed(ctx, org.id);
  return toSite(row);
}

/** The org's sites in the caller's mode; any member reads them. */
export async function listSites(ctx: AppContext, actor: Actor, orgSlug: string) {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug });
  return { sites: (await sitesOf(ctx.db, org.id, modeOf(actor))).map(toSite) };
}

export async function getSite(ctx: AppContext, actor: Actor, orgSlug: string, id: number): Promise<Site> {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug });
  const row = await findSite(ctx.db, org.id, modeOf(actor), id);
  if (!row) throw notFound();
  return toSite(row);
}

async function managedSite(ctx: AppContext, actor: Actor, orgSlug: string, id: number): Promise<SiteRow> {
  const { org } = await orgAccess(ctx, actor, { slug: orgSlug }, WRITE);
  const row = await findSite(ctx.db, org.id, modeOf(actor), id);
  if (!row) throw notFound();
  return row;
}

export async function updateSite(ctx: AppContext, actor: Actor, orgSlug: string, id: number, input: UpdateSiteBody): Promise<Site> {
  const row = await managedSite(ctx, actor, orgSlug, id);
  const geometry = input.area !== undefined || input.lat !== undefined || input.lng !== undefined || input.radius_m !== undefined;
  const shape = geometry ? shapeOf(input, row) : {};
  const name = input.name?.trim();
  if (name === '') throw invalidField('name', 'must not be blank');
  const after = await updateRow(ctx.db, row.id, { ...shape, ...(name === undefined ? {} : { name }), updated_at: iso(ctx.clock.now()) });
  changed(ctx, row.org_id);
  return toSite(after);
}

/** Deletes a site and the presence recorded in it (no exit is recorded for the devices inside). */
export async function deleteSite(ctx: AppContext, actor: Actor, orgSlug: string, id: number) {
  const row = await managedSite(ctx, actor, orgSlug, id);
  await ctx.transaction((tx) => deleteRow(tx.db, row.id));
  changed(ctx, row.org_id);
  return { id: row.id, deleted: true as const };
}
