import type { Generated } from 'kysely';
import type { Mode } from '../../db/schema.js';

// The tables of modules/api-keys as stored (src/db/schema.ts composes DB from every module's tables).

export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  mode: Mode;
  key_hash: string;
  last4: string;
  created_at: string;
  revoked_at: string | null;
}

export interface ApiKeysTables {
  api_keys: ApiKeysTable;
}
