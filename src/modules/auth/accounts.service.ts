import type { AppContext } from '../../context.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { slugsLike } from '../../db/slugs.js';
import type { Actor } from '../../lib/actor.js';
import { iso } from '../../lib/clock.js';
import { conflict, invalidField, notFound } from '../../lib/errors.js';
import { firstFreeSlug, slugify } from '../../lib/slug.js';
import { findInvite, insertMembership, insertOrg, membershipBegan, proveEmail } from '../orgs/index.js';
import {
  defaultPlan,
  findUserByEmail,
  findUserById,
  insertUser,
  normalizeEmail,
  requireAdmin,
  toAdminUser,
  updateUser,
  userRowChanged,
  type AdminUpdateUserBody,
  type AdminUser,
  type CreateUserBody,
  type UserRow,
} from '../users/index.js';
import { sendVerification } from './email-verification.js';

/**
 * Registers a user and their personal primary org (owner). Slugs come from the name and get a
 * numeric suffix when taken; a concurrent registration taking the same slug is retried. The
 * address is unproven: a confirmation code is emailed, unless the registration comes through an
 * invite link of this address (`invite_token`), which proves it and accepts the invite.
 */
export async function registerUser(ctx: AppContext, input: CreateUserBody): Promise<UserRow> {
  const email = normalizeEmail(input.email);
  const name = input.name.trim();
  // Hash outside the transaction: it takes tens of milliseconds and must not hold the write lock.
  const passwordHash = await ctx.passwords.hash(input.password);
  const invite = input.invite_token === undefined ? undefined : await findInvite(ctx, input.invite_token);
  if (input.invite_token !== undefined && invite?.email !== email) throw invalidField('invite_token', 'is not a valid invite for this email');

  for (let attempt = 0; ; attempt++) {
    try {
      return await ctx.transaction(async (tx) => {
        const { db } = tx;
        if (await findUserByEmail(db, email)) throw conflict('Email already registered');
        const now = iso(ctx.clock.now());
        const base = slugify(name);
        const slug = firstFreeSlug(base, await slugsLike(db, 'users', base));
        const user = await insertUser(db, {
          email,
          password_hash: passwordHash,
          name,
          slug,
          timezone: input.timezone ?? 'UTC',
          created_at: now,
          email_verified: 0,
          plan: await defaultPlan(db),
        });
        const orgSlug = firstFreeSlug(slug, await slugsLike(db, 'orgs', slug));
        const org = await insertOrg(db, { name, slug: orgSlug, description: null, personal: 1, owner_id: user.id, created_at: now });
        await insertMembership(db, { orgId: org.id, userId: user.id, role: 'owner', primary: true, createdAt: now });
        if (invite) return (await proveEmail(db, user, now)) ?? user;
        await sendVerification(ctx, tx, user);
        return user;
      });
    } catch (err) {
      if (isUniqueViolation(err, 'email')) throw conflict('Email already registered');
      if (isUniqueViolation(err) && attempt < 5) continue;
      throw err;
    }
  }
}

/** An admin changes a plan, or vouches for (or withdraws) a user's address: vouching accepts their waiting invites. */
export async function adminUpdateUser(ctx: AppContext, actor: Actor, userId: number, input: AdminUpdateUserBody): Promise<AdminUser> {
  await requireAdmin(ctx, actor);
  const now = iso(ctx.clock.now());
  const user = await ctx.transaction(async (tx) => {
    const { db } = tx;
    const target = await findUserById(db, userId);
    if (!target) return undefined;
    if (input.email_verified === true && target.email_verified === 0) await proveEmail(db, target, now, membershipBegan(ctx, target.id, tx), () => userRowChanged(ctx, target.id, tx));
    userRowChanged(ctx, target.id, tx);
    return updateUser(db, userId, {
      ...(input.plan !== undefined ? { plan: input.plan } : {}),
      ...(input.email_verified === false ? { email_verified: 0 as const } : {}),
      updated_at: now,
    });
  });
  if (!user) throw notFound();
  return toAdminUser(ctx, user);
}
