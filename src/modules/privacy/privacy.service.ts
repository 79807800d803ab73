import type { AppContext } from '../../context.js';
import { lockOrgs, lockUserForDeletion } from '../../db/locks.js';
import { flag } from '../../db/schema.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { conflict, invalidField, notFound, unauthorized } from '../../lib/errors.js';
import { redeemCode } from '../auth/index.js';
import type { Guard } from '../auth/index.js';
import { endUserSessions } from '../auth/index.js';
import { orgAccess } from '../orgs/index.js';
import { recordMembershipsEnded } from '../orgs/index.js';
import { removeUploads } from '../retention/index.js';
import { writeAudit } from '../signals/index.js';
import { findUserById } from '../users/index.js';
import * as repo from './privacy.repository.js';
import { rulesOf } from '../paging/index.js';
import { deleteTracksOf, exportTracks } from '../tracks/index.js';

const FAR_FUTURE = '9999-12-31T23:59:59.999Z';
const bool = (v: number) => v === 1;

/**
 * Everything Muster holds about the caller, as one JSON document (GET /v1/auth/me/export). Secrets
 * never appear: no password hash, key or session secret, device token or calendar password.
 * Uploads are linked by their URLs (`uploads`); emails received from the person's proven address
 * are included as received (issue 31, F8).
 */
export async function exportMe(ctx: AppContext, actor: Actor) {
  const user = await findUserById(ctx.db, actor.userId);
  if (!user) throw notFound();
  const r = await repo.exportRows(ctx.db, user.id, user.email, user.email_verified === 1, actor.mode);
  const live = (row: { livemode: number }) => ({ livemode: bool(row.livemode) });
  return {
    format: 'muster-export/1',
    exported_at: iso(ctx.clock.now()),
    profile: {
      id: user.id,
      email: user.email,
      email_verified: bool(user.email_verified),
      name: user.name,
      slug: user.slug,
      plan: user.plan,
      timezone: user.timezone,
      phone: user.phone,
      phone_verified_at: user.phone_verified_at,
      // The paging rules that apply (the defaults when never set).
      notification_rules: await rulesOf(ctx.db, user.id),
      created_at: user.created_at,
      updated_at: user.updated_at,
    },
    memberships: r.memberships.map(({ is_primary, ...m }) => ({ ...m, primary: bool(is_primary) })),
    teams: r.teams.map((t) => ({ ...t, active: bool(t.active) })),
    api_keys: r.apiKeys,
    sessions: r.sessions,
    devices: r.devices.map((d) => ({ ...d, ...live(d) })),
    push_subscriptions: r.push,
    calendars: r.calendars,
    incidents: r.incidents.map(({ id, ...i }) => ({ Id: id, ...i, ...live(i) })),
    replies: r.replies.map((x) => ({ ...x, public: bool(x.public) })),
    signals: r.signals.map(({ id, meta, ...s }) => ({ Id: id, ...s, ...live(s), meta })),
    uploads: [...new Set(r.signals.map((s) => s.image_url).filter((u): u is string => u !== null))],
    event_types: r.eventTypes.map((e) => ({ ...e, ...live(e) })),
    bookings: {
      hosted: r.hosted.map((b) => ({ ...b, ...live(b) })),
      attended: r.attending.map((b) => ({ ...b, ...live(b) })),
    },
    audit: r.audit.map((a) => ({ ...a, ...live(a) })),
    // The positions kept as tracks by the orgs that keep them (docs/privacy.md).
    tracks: await exportTracks(ctx, user.id, actor.mode),
    inbound_emails: r.inbound.map(({ rcpt_to, reply_to_incident_id, incident_id, created_at, raw, raw_removed_at, ...m }) => ({
      ...m,
      ...live(m),
      to: rcpt_to,
      incident_id: incident_id ?? reply_to_incident_id,
      received_at: created_at,
      raw_base64: raw_removed_at === null ? raw : null,
      raw_removed_at,
    })),
  };
}

/**
 * Deletes the caller's account (DELETE /v1/auth/me). Proof: the password, or for an account
 * without one (magic codes only) a fresh sign-in code from POST /v1/auth/magic-link; either is
 * accepted, each counted on its door of the per-account throttle. A sole owner of an org that has
 * other members gets 409 until ownership is transferred. Orgs with no other member go with the
 * account. Every session, key and stream of the user ends through the access notices.
 */
export async function deleteMe(ctx: AppContext, guard: Guard, actor: Actor, input: { password?: string | undefined; code?: string | undefined }) {
  const user = await findUserById(ctx.db, actor.userId);
  if (!user) throw notFound();
  if (input.password !== undefined) {
    await guard('password', user.email, async () => {
      if (!user.password_hash || !(await ctx.passwords.verify(user.password_hash, input.password!))) throw unauthorized();
    });
  } else if (input.code !== undefined) {
    await guard('code', user.email, async () => {
      if (!(await redeemCode(ctx, user.email, 'magic', input.code!))) throw unauthorized();
    });
  } else {
    throw invalidField(user.password_hash ? 'password' : 'code', user.password_hash ? 'is required' : 'is required: request one with POST /v1/auth/magic-link');
  }

  // Beacons may live in Redis, out of the cascade's reach: switch the person's devices off first.
  const store = ctx.beacons;
  for (const key of (await store.silent(ctx.db, FAR_FUTURE, 1_000_000)).filter((k) => k.userId === user.id)) await store.switchOff(ctx.db, key);

  const dialect = ctx.database.dialect;
  const { images, soleOrgs } = await ctx.transaction(async (tx) => {
    // The user row first (PostgreSQL): requests of theirs that have written a row referring to them
    // (a signal, key, device) commit before this goes on, and are deleted below; later ones wait and
    // then fail their foreign-key check (409). Then their orgs, in id order, as role changes and
    // removals lock them: the owners counted below stay who they are until this commits.
    if (!(await lockUserForDeletion(tx.db, dialect, user.id))) throw notFound();
    await lockOrgs(tx.db, dialect, await repo.orgIdsOf(tx.db, user.id));
    const blocked = (await repo.ownedOrgs(tx.db, user.id)).filter((o) => Number(o.others) > 0 && Number(o.other_owners) === 0);
    if (blocked.length > 0) {
      throw conflict(`You are the only owner of ${blocked.map((o) => o.slug).join(', ')}: make another member an owner, or delete the org, first`);
    }
    const soleOrgs = await repo.soleMemberOrgs(tx.db, user.id);
    const images = await repo.signalImagesOf(tx.db, user.id);
    await repo.deleteSignalsOf(tx.db, user.id);
    await deleteTracksOf(tx.db, user.id);
    // Through the notices, so streams close and credential caches forget, once this commits.
    await endUserSessions(ctx, user.id, { tx });
    for (const keyId of await repo.keyIdsOf(tx.db, user.id)) ctx.events.endAccess({ keyId }, tx);
    ctx.events.endAccess({ userId: user.id }, tx);
    // On-call schedules count them out of every org from now on, and keep who they were on call for.
    await recordMembershipsEnded(tx.db, user.id, undefined, iso(ctx.clock.now()));
    if (!(await repo.deleteAccount(tx.db, user))) throw notFound();
    return { images, soleOrgs };
  });
  // The orgs only they belonged to, in a transaction of their own: deleting an org locks its row
  // against inserts into it, and one of theirs could hold that row while it waits for the user row
  // locked above (a deadlock). Now that the user is gone, nothing of theirs is being written. A
  // crash before this leaves them without members: the `memberless-orgs` job deletes them then.
  const orgs = await deleteMemberlessOrgs(ctx, soleOrgs);
  const files = (await removeUploads(ctx, images)) + orgs.files;
  ctx.log.info({ userId: user.id, orgsDeleted: orgs.orgs, files }, 'account deleted');
  return { deleted: true as const };
}

/**
 * Deletes orgs left without any member, with everything in them (their uploads too): those of
 * `among`, or with none given every such org, in batches (the `memberless-orgs` job). An org always
 * keeps an owner (the last one can be neither removed nor demoted), so the only memberless orgs are
 * those of a deleted account whose deletion stopped between its two transactions (a crash).
 */
export async function deleteMemberlessOrgs(ctx: AppContext, among?: readonly number[]): Promise<{ orgs: number; files: number }> {
  let orgs = 0;
  const images: string[] = [];
  for (;;) {
    const ids = await repo.memberlessOrgIds(ctx.db, among, 100);
    if (ids.length === 0) break;
    const deleted = await ctx.transaction(async (tx) => {
      images.push(...(await repo.orgImages(tx.db, ids)));
      const gone = await repo.deleteOrgsWithoutMembers(tx.db, ids);
      for (const orgId of gone) ctx.events.endAccess({ orgId }, tx);
      return gone;
    });
    orgs += deleted.length;
    // Orgs joined since they were read stay; with nothing deleted this round, the rest were joined too.
    if (deleted.length === 0) break;
  }
  const files = await removeUploads(ctx, images);
  if (orgs > 0 && among === undefined) ctx.log.warn({ orgs, files }, 'deleted orgs left without members');
  return { orgs, files };
}

/**
 * Deletes one person's signals in an org, on their request (owners only; DELETE
 * /v1/orgs/:org_slug/members/:user_id/signals). Both modes, members and former members alike;
 * their uploads go too. The audit log records who did it and how many went.
 */
export async function deleteMemberSignals(ctx: AppContext, actor: Actor, slug: string, userId: number) {
  const { org } = await orgAccess(ctx, actor, { slug }, { role: 'owner' });
  const { deleted, images } = await ctx.transaction(async (tx) => {
    const images = await repo.signalImagesOf(tx.db, userId, org.id);
    const deleted = await repo.deleteSignalsOf(tx.db, userId, org.id);
    await writeAudit(tx.db, {
      org_id: org.id,
      livemode: flag(actor.mode === 'live'),
      action: 'member_signals_deleted',
      user_id: actor.userId,
      device_id: null,
      meta: JSON.stringify({ member_id: userId, deleted }),
      created_at: iso(ctx.clock.now()),
    });
    return { deleted, images };
  });
  await removeUploads(ctx, images);
  return { user_id: userId, deleted };
}
