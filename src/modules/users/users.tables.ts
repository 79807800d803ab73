import type { Generated } from 'kysely';
import type { Flag, Plan } from '../../db/schema.js';

// The tables of modules/users as stored (src/db/schema.ts composes DB from every module's tables).

export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string | null;
  name: string;
  slug: string;
  plan: Plan;
  timezone: string;
  phone: string | null;
  is_admin: Flag;
  /** Part of the signed calendar feed link; bumping it revokes the old link. */
  calendar_feed_version: Generated<number>;
  created_at: string;
  updated_at: string;
  /** 1 once the address is proven (verification link, magic or reset code, invite link, an admin). */
  email_verified: Generated<Flag>;
  /** 0040: when the current `phone` was proven by its SMS code; null: not proven (paging skips it). */
  phone_verified_at: string | null;
}

export interface UsersTables {
  users: UsersTable;
}
