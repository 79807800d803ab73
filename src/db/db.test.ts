import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, testDialect, type TestApp } from '../../test/helpers.js';
import { enqueueMany } from '../modules/deliveries/outbox.repository.js';
import { insertOrg } from '../modules/orgs/orgs.repository.js';
import { isUniqueViolation } from './dialect.js';
import { migrateToLatest } from './migrate.js';
import { scoped } from './scope.js';

describe(`data layer on ${testDialect}`, () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  const now = '2026-01-05T12:00:00.000Z';
  const newOrg = (slug: string) => insertOrg(t.ctx.db, { name: slug, slug, description: null, personal: 0, created_at: now });

  test('runs on the engine the test run asked for', () => {
    assert.equal(t.ctx.database.dialect, testDialect);
  });

  test('migrating again is a no-op', async () => {
    const { results } = await migrateToLatest(t.ctx.database);
    assert.deepEqual(results, []);
  });

  test('after-commit hooks run after the commit, in order', async () => {
    const seen: string[] = [];
    // Inside a transaction every query goes through tx.db: on SQLite the one connection is held
    // by the transaction, so a query on ctx.db would wait for it forever.
    const result = await t.ctx.transaction(async (tx) => {
      tx.onCommit(() => {
        seen.push('first');
      });
      tx.onCommit(async () => {
        // The row is visible to other connections by the time the hook runs.
        const row = await t.ctx.db.selectFrom('orgs').select('slug').where('slug', '=', 'hook-tx').executeTakeFirst();
        seen.push(row ? 'second saw the row' : 'second saw nothing');
      });
      await insertOrg(tx.db, { name: 'x', slug: 'hook-tx', description: null, personal: 0, created_at: now });
      assert.deepEqual(seen, [], 'nothing runs before the commit');
      return 42;
    });
    assert.equal(result, 42);
    assert.deepEqual(seen, ['first', 'second saw the row']);
  });

  test('a rollback discards the writes and the hooks', async () => {
    let ran = false;
    await assert.rejects(
      t.ctx.transaction(async (tx) => {
        await insertOrg(tx.db, { name: 'x', slug: 'rolled-back', description: null, personal: 0, created_at: now });
        tx.onCommit(() => {
          ran = true;
        });
        throw new Error('abort');
      }),
      /abort/,
    );
    assert.equal(ran, false);
    assert.equal(await t.ctx.db.selectFrom('orgs').select('id').where('slug', '=', 'rolled-back').executeTakeFirst(), undefined);
  });

  test('a failing hook neither fails nor undoes the operation', async () => {
    await t.ctx.transaction(async (tx) => {
      await insertOrg(tx.db, { name: 'x', slug: 'hook-fails', description: null, personal: 0, created_at: now });
      tx.onCommit(() => {
        throw new Error('hook broke');
      });
    });
    assert.ok(await t.ctx.db.selectFrom('orgs').select('id').where('slug', '=', 'hook-fails').executeTakeFirst());
  });

  test('unique violations are recognised on this engine, by column', async () => {
    await newOrg('unique-slug');
    const err = await newOrg('unique-slug').then(
      () => assert.fail('duplicate slug accepted'),
      (e: unknown) => e,
    );
    assert.equal(isUniqueViolation(err), true);
    assert.equal(isUniqueViolation(err, 'slug'), true);
    assert.equal(isUniqueViolation(err, 'email'), false);
    assert.equal(isUniqueViolation(new Error('other')), false);
  });

  test('foreign keys are enforced', async () => {
    await assert.rejects(
      t.ctx.db.insertInto('memberships').values({ org_id: 999_999, user_id: 999_999, role: 'member', is_primary: 0, created_at: now }).execute(),
    );
  });

  test('scoped() keeps only rows of the given orgs and mode', async () => {
    const a = await newOrg('scope-a');
    const b = await newOrg('scope-b');
    for (const [org, mode, recipient] of [
      [a.id, 'live', 'a-live'],
      [a.id, 'test', 'a-test'],
      [b.id, 'live', 'b-live'],
      [b.id, 'test', 'b-test'],
    ] as const) {
      await enqueueMany(t.ctx.db, [{ kind: 'email', topic: 'scope.test', orgId: org, mode, recipient, payload: {} }], now);
    }
    const visible = async (orgIds: number[], mode: 'live' | 'test') =>
      (
        await t.ctx.db
          .selectFrom('outbox')
          .select('recipient')
          .where('topic', '=', 'scope.test')
          .$call(scoped({ orgIds, mode }, 'outbox'))
          .orderBy('recipient')
          .execute()
      ).map((r) => r.recipient);

    assert.deepEqual(await visible([a.id], 'live'), ['a-live']);
    assert.deepEqual(await visible([a.id], 'test'), ['a-test']);
    assert.deepEqual(await visible([a.id, b.id], 'test'), ['a-test', 'b-test']);
    assert.deepEqual(await visible([], 'live'), []);

    // Updates and deletes are scoped the same way.
    await t.ctx.db.deleteFrom('outbox').where('topic', '=', 'scope.test').$call(scoped({ orgIds: [b.id], mode: 'live' }, 'outbox')).execute();
    assert.deepEqual(await visible([a.id, b.id], 'live'), ['a-live']);
  });

  test('counts and ids come back as numbers, JSON and flags as stored text and 0/1', async () => {
    const org = await newOrg('types');
    assert.equal(typeof org.id, 'number');
    assert.equal(org.personal, 0);
    await enqueueMany(t.ctx.db, [{ kind: 'email', topic: 'types', mode: 'test', recipient: 'r', payload: { a: [1] } }], now);
    const { id } = await t.ctx.db.selectFrom('outbox').select('id').where('topic', '=', 'types').executeTakeFirstOrThrow();
    assert.equal(typeof id, 'number');
    const row = await t.ctx.db.selectFrom('outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.livemode, 0);
    assert.deepEqual(JSON.parse(row.payload), { a: [1] });
    assert.equal(row.created_at, now);
    const count = await t.ctx.db.selectFrom('outbox').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(typeof count.n, 'number');
  });
});
