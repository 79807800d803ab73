import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { dropTestSchema, testSchemaName } from '../helpers.js';
import { clusterEnv, newUser, ok, startInstance, type ClusterUser, type Instance } from './instances.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

// Issue #40: each instance keeps who is on call per schedule (modules/oncall/around-memo.ts) under
// the schedule's version, which every write moves in its transaction. A write on B is answered by A
// on its very next question, with no notice between them: A reads the version with the schedule rows.
// The first test shows that A really serves from memory (a row written without moving the version
// is not seen there).

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const HOUR = 3_600_000;

interface OrgView {
  schedules: { id: number; on_call: { user_id: number }[]; next: { user_id: number }[] }[];
}

describe('two instances: the on-call memo of each follows writes made on the other', () => {
  let redis: RedisServer;
  let db: pg.Client;
  const schema = testSchemaName('c');
  let a: Instance;
  let b: Instance;
  let root: ClusterUser;
  let bob: ClusterUser;
  let slug: string;

  before(async () => {
    redis = await startRedisServer();
    const env = clusterEnv(DATABASE_URL, schema, redis);
    a = await startInstance('a', env); // the first migrates the schema
    b = await startInstance('b', env);
    db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
    root = await newUser(a, b, 'Root'); // the first user: instance admin
    bob = await newUser(a, b, 'Bob');
    slug = (await ok<{ orgs: { slug: string; primary: boolean }[] }>(200, a, 'GET', '/v1/orgs', { cookie: root.cookie })).orgs.find((o) => o.primary)!.slug;
    const { email } = await ok<{ email: string }>(200, a, 'PATCH', `/v1/users/${bob.id}`, { cookie: root.cookie }, { email_verified: true });
    await ok(201, a, 'POST', `/v1/orgs/${slug}/members`, { cookie: root.cookie }, { email, role: 'member' });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await db?.end();
    await redis?.clean();
    await redis?.stop();
    await dropTestSchema(schema);
  });

  /** Daily turns of root and bob from yesterday (UTC). */
  const schedule = async (name: string) => {
    const start = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const layers = [{ name: 'Days', start: `${start}T00:00`, turn: { unit: 'day', length: 1 }, users: [root.id, bob.id] }];
    return (await ok<{ id: number }>(201, b, 'POST', `/v1/orgs/${slug}/schedules`, { cookie: root.cookie }, { name, time_zone: 'UTC', layers })).id;
  };
  const onCall = async (at: Instance, id: number) => (await ok<OrgView>(200, at, 'GET', `/v1/orgs/${slug}/on-call`, { cookie: root.cookie })).schedules.find((s) => s.id === id)!.on_call[0]?.user_id;
  const other = (id: number | undefined) => (id === root.id ? bob.id : root.id);
  const span = () => ({ start: new Date().toISOString(), end: new Date(Date.now() + HOUR).toISOString() });

  test('A serves from memory: an override written behind its back (version not moved) is not seen there until the version moves', async () => {
    const id = await schedule('Held');
    const first = await onCall(a, id);
    assert.ok(first !== undefined);
    const { start, end } = span();
    await db.query(`insert into ${schema}.oncall_overrides (schedule_id, user_id, start_time, end_time, created_at) values ($1, $2, $3, $4, $3)`, [id, other(first), start, end]);
    assert.equal(await onCall(a, id), first, 'A answers from its memo');
    await db.query(`update ${schema}.oncall_schedules set version = version + 1 where id = $1`, [id]);
    assert.equal(await onCall(a, id), other(first), 'the version moved: A resolves again');
  });

  test('an override added and ended on B, the layers changed on B: A answers each on its next question', async () => {
    const id = await schedule('Writes');
    const first = await onCall(a, id);
    assert.equal(await onCall(a, id), first);
    const o = await ok<{ id: number }>(201, b, 'POST', `/v1/orgs/${slug}/schedules/${id}/overrides`, { cookie: root.cookie }, { user_id: other(first), ...span() });
    assert.equal(await onCall(a, id), other(first), 'override added on B');
    await ok(200, b, 'DELETE', `/v1/orgs/${slug}/schedules/${id}/overrides/${o.id}`, { cookie: root.cookie });
    assert.equal(await onCall(a, id), first, 'override ended on B');
    const layers = [{ name: 'Alone', start: '2026-01-05T00:00', turn: { unit: 'day', length: 1 }, users: [other(first)] }];
    await ok(200, b, 'PATCH', `/v1/orgs/${slug}/schedules/${id}`, { cookie: root.cookie }, { layers });
    assert.equal(await onCall(a, id), other(first), 'layers changed on B');
  });
});
