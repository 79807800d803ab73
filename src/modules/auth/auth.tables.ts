import type { Generated } from 'kysely';

// The tables of modules/auth as stored (src/db/schema.ts composes DB from every module's tables).

export interface SessionsTable {
  /** SHA-256 of the cookie value; the cookie itself is never stored. */
  id: string;
  user_id: number;
  created_at: string;
  expires_at: string;
}

export interface MagicCodesTable {
  id: Generated<number>;
  email: string;
  code_hash: string;
  attempts: number;
  expires_at: string;
  used_at: string | null;
  created_at: string;
  purpose: Generated<CodePurpose>;
}

/** What an emailed six-digit code is for: signing in, resetting the password, proving the address. */
export type CodePurpose = 'magic' | 'reset' | 'verify' | 'phone';

export interface AuthTables {
  sessions: SessionsTable;
  magic_codes: MagicCodesTable;
}
