import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { dropTestSchema, testSchemaName } from '../helpers.js';
import { connectSse, eventOf, within, type SseClient } from '../sse-client.js';
import { call, clusterEnv, newUser, ok, startInstance, until, type ClusterUser, type Instance } from './instances.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

// Issue #14 items 1 and 8 across instances: access that ends on instance A closes the streams it
// opened on instance B within a second, and the per-user stream cap counts the streams of both.

const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const LIMIT = 3;

describe('two instances: streams end with access everywhere, and one cap counts both', () => {
  let redis: RedisServer;
  let db: pg.Client;
  const schema = testSchemaName('s');
  let a: Instance;
  let b: Instance;
  const streams: SseClient[] = [];

  before(async () => {
    redis = await startRedisServer();
    const env = clusterEnv(DATABASE_URL, schema, redis, {
      SSE_HEARTBEAT_MS: '1000',
      STREAM_LIMIT_PER_USER: String(LIMIT),
    });
    a = await startInstance('a', env); // the first migrates the schema
    b = await startInstance('b', env);
    db = new pg.Client({ connectionString: DATABASE_URL });
    await db.connect();
  });
  after(async () => {
    for (const s of streams) await s.close();
    await a?.stop();
    await b?.stop();
    await db?.end();
    await redis?.clean();
    await redis?.stop();
    await dropTestSchema(schema);
  });

  const connect = async (at: Instance, headers: Record<string, string>, path = '/v1/incidents/stream') => {
    const s = await connectSse(at.port, path, headers);
    streams.push(s);
    return s;
  };
  const open = async (at: Instance, headers: Record<string, string>, path?: string) => {
    const s = await connect(at, headers, path);
    assert.equal(s.status, 200, `${at.name}: ${s.status}`);
    await s.waitForEvent('connected');
    return s;
  };
  const statusOn = async (at: Instance, headers: Record<string, string>) => (await fetch(`${at.url}/v1/incidents/stream`, { headers })).status;
  const ends = (s: SseClient, what: string) => within(s.ended, 1_000, what);

  test('a key revoked on A closes its stream on B within a second; B refuses it afterwards', async () => {
    const ann = await newUser(a, b, 'Ann');
    const keyId = (await ok<{ api_keys: { id: number; mode: string }[] }>(200, a, 'GET', '/v1/api-keys', { cookie: ann.cookie })).api_keys.find((k) => k.mode === 'live')!.id;
    const onB = await open(b, ann.live);
    const sessionOnB = await open(b, { cookie: ann.cookie });
    await ok(200, a, 'DELETE', `/v1/api-keys/${keyId}`, { cookie: ann.cookie });
    await ends(onB, 'the revoked key’s stream on B closing');
    assert.equal(await statusOn(b, ann.live), 401);
    assert.ok(sessionOnB.isOpen, 'the same user’s session stream stays');
  });

  test('a logout on A closes the session’s stream on B', async () => {
    const bob = await newUser(a, b, 'Bob');
    const onB = await open(b, { cookie: bob.cookie });
    const keyOnB = await open(b, bob.live);
    await ok(200, a, 'POST', '/v1/auth/logout', { cookie: bob.cookie });
    await ends(onB, 'the logged-out session’s stream on B closing');
    assert.equal(await statusOn(b, { cookie: bob.cookie }), 401);
    assert.ok(keyOnB.isOpen);
  });

  test('a member removed on A: their stream on B closes, and reopened on B it no longer names the org', async () => {
    const owner = await newUser(a, b, 'Olive');
    const member: ClusterUser = await newUser(b, a, 'Max');
    await db.query(`update ${schema}.users set plan = 'agency' where id = $1`, [owner.id]); // orgs beyond the personal one need a plan
    const org = await ok<{ id: number; slug: string }>(201, a, 'POST', '/v1/orgs', owner.live, { name: `Shared ${Date.now()}` });
    await db.query(`insert into ${schema}.memberships (org_id, user_id, role, is_primary, created_at) values ($1, $2, 'member', 0, $3)`, [org.id, member.id, new Date().toISOString()]);
    const onB = await open(b, member.live);
    assert.ok((eventOf(onB.frames[0]!)?.org_ids ?? []).includes(org.id));

    await ok(200, a, 'DELETE', `/v1/orgs/${org.slug}/members/${member.id}`, owner.live);
    await ends(onB, 'the removed member’s stream on B closing');
    const reopened = await open(b, member.live);
    assert.ok(!(eventOf(reopened.frames[0]!)?.org_ids ?? []).includes(org.id));
  });

  test('the stream cap counts the streams a user holds on both instances', async () => {
    const cap = await newUser(a, b, 'Cap');
    const held = [await open(a, cap.live), await open(a, cap.test, '/v1/signals/stream'), await open(b, { cookie: cap.cookie })];
    assert.equal(held.length, LIMIT);
    for (const at of [a, b]) {
      const refused = await call(at, 'GET', '/v1/incidents/stream', cap.live);
      assert.equal(refused.status, 429, `${at.name} counts the streams on the other instance too`);
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.deepEqual(refused.body, { error: 'Too many requests', code: 'rate_limited' });
    }
    await held[0]!.close(); // a slot on A
    await until(async () => {
      const s = await connect(b, cap.live);
      if (s.status === 200) return true;
      await s.close();
      return false;
    }, 'B lets a stream in once A gave its slot back');
  });
});
