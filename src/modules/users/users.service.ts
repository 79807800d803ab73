import type { AppContext } from '../../context.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { forbidden, invalidField, notFound } from '../../lib/errors.js';
import type { PagingQuery } from '../../lib/schemas.js';
import * as users from './users.repository.js';
import type { UserRow } from './users.repository.js';
import type { AdminUser, MeResponse, UpdateMeBody } from './users.schemas.js';
import { cachedUser, heldUser, userRowChanged } from './user-cache.js';
import { lockUsers } from '../../db/locks.js';

export const normalizeEmail = (email: string) => email.trim().toLowerCase();

/** The first user of the instance, or a PROVEN address of MUSTER_ADMIN_EMAILS (registering one proves nothing). */
export function isAdmin(ctx: AppContext, user: UserRow): boolean {
  return user.is_admin === 1 || (user.email_verified === 1 && ctx.config.adminEmails.includes(user.email));
}

export const toUser = (u: UserRow) => ({
  id: u.id,
  email: u.email,
  name: u.name,
  slug: u.slug,
  plan: u.plan,
  timezone: u.timezone,
});

// Written out rather than `{ ...toUser(u), phone, ... }`: on Node 20 (V8 11.3) adding properties to an object made by
// spread costs about 1 µs each (a new hidden class every time), 6 µs of every GET /v1/auth/me. docs/architecture.md,
// "Object spread on hot paths". It repeats toUser's six fields on purpose: `Object.assign(toUser(u), {...})` measured
// slower as well (76 and 131 against 68 µs per request, alternated, bench/cpu-per-request.ts auth-me).
export const toMe = (ctx: AppContext, u: UserRow, livemode = true): MeResponse => ({
  id: u.id,
  email: u.email,
  name: u.name,
  slug: u.slug,
  plan: u.plan,
  timezone: u.timezone,
  phone: u.phone,
  phone_verified: u.phone !== null && u.phone_verified_at !== null,
  admin: isAdmin(ctx, u),
  email_verified: u.email_verified === 1,
  livemode,
});

export const toAdminUser = (ctx: AppContext, u: UserRow): AdminUser => Object.assign(toMe(ctx, u), { created_at: u.created_at });

/** Instances (contexts) known to have an account: one never goes back to having none in practice, so it is read once. */
const populated = new WeakSet<AppContext>();

/** Whether any account exists; false only on a fresh instance, whose dashboard then opens on "Create account". */
export async function hasUsers(ctx: AppContext): Promise<boolean> {
  if (populated.has(ctx)) return true;
  const any = await users.anyUserId(ctx.db);
  if (any !== undefined) populated.add(ctx);
  return any !== undefined;
}

/** getMe without a promise when the user's row is held in memory (the route's fast path); else undefined. */
export function heldMe(ctx: AppContext, actor: Actor): MeResponse | undefined {
  const user = heldUser(ctx, actor.userId);
  return user && toMe(ctx, user, actor.mode === 'live');
}

export async function getMe(ctx: AppContext, actor: Actor): Promise<MeResponse> {
  const user = await cachedUser(ctx, actor.userId);
  if (!user) throw notFound();
  return toMe(ctx, user, actor.mode === 'live');
}

export async function updateMe(ctx: AppContext, actor: Actor, input: UpdateMeBody): Promise<MeResponse> {
  // Named in the schema so it is not silently dropped: a password needs the current one.
  if (input.password !== undefined) throw invalidField('password', 'is changed with POST /v1/auth/password {current_password, new_password}');
  const patch = {
    ...(input.name !== undefined ? { name: input.name.trim() } : {}),
    ...(input.timezone !== undefined ? { timezone: input.timezone } : {}),
    updated_at: iso(ctx.clock.now()),
  };
  const phone = input.phone;
  // A number is proven by its SMS code (paging): a new one, or the same one not yet proven, gets a
  // code; the same proven one changes nothing; null forgets it.
  const user =
    phone === undefined
      ? await users.updateUser(ctx.db, actor.userId, patch)
      : await ctx.transaction(async (tx) => {
          // Locked before it is read: of two changes at once, the second sees the first's number.
          await lockUsers(tx.db, ctx.database.dialect, [actor.userId]);
          const before = await users.findUserById(tx.db, actor.userId);
          if (!before) return undefined;
          if (phone === before.phone && before.phone_verified_at !== null) return users.updateUser(tx.db, actor.userId, patch);
          if (phone !== null) await ctx.escalation.sendPhoneCode(ctx, tx, actor.userId, phone);
          return users.updateUser(tx.db, actor.userId, { ...patch, phone, phone_verified_at: null });
        });
  if (!user) throw notFound();
  userRowChanged(ctx, user.id);
  return toMe(ctx, user, actor.mode === 'live');
}

export async function requireAdmin(ctx: AppContext, actor: Actor): Promise<void> {
  const me = await users.findUserById(ctx.db, actor.userId);
  if (!me || !isAdmin(ctx, me)) throw forbidden();
}

export async function listUsers(ctx: AppContext, actor: Actor, paging: PagingQuery) {
  await requireAdmin(ctx, actor);
  const { rows, total } = await users.listUsers(ctx.db, paging.limit, (paging.page - 1) * paging.limit);
  return { users: rows.map((u) => toAdminUser(ctx, u)), total, page: paging.page, limit: paging.limit };
}
