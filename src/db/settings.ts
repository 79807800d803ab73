import type { Kysely } from 'kysely';
import { randomToken } from '../lib/crypto.js';
import type { DB } from './schema.js';

/** A setting, created with `make()` on first use; concurrent first uses agree on one value. */
export async function getOrCreateSetting(db: Kysely<DB>, key: string, make: () => string): Promise<string> {
  await db
    .insertInto('settings')
    .values({ key, value: make() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}

/** A setting stored as JSON, read back as its value: created with `make()` on first use, as getOrCreateSetting. */
export async function getOrCreateJsonSetting<T>(db: Kysely<DB>, key: string, make: () => T): Promise<T> {
  return JSON.parse(await getOrCreateSetting(db, key, () => JSON.stringify(make()))) as T;
}

/** The secret that signs public links, made at first start and shared by every instance. */
export const instanceSecret = (db: Kysely<DB>) => getOrCreateSetting(db, 'instance_secret', () => randomToken(32));

/** A setting's value, or undefined when it was never set. */
export async function readSetting(db: Kysely<DB>, key: string): Promise<string | undefined> {
  return (await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())?.value;
}

/** Sets (or replaces) a setting. */
export async function writeSetting(db: Kysely<DB>, key: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute();
}
