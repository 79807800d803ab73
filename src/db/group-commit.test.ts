import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { buildTestApp, testDialect, type TestApp } from '../../test/helpers.js';
import { insertOrg } from '../modules/orgs/orgs.repository.js';
import { GroupCommitError } from './group-commit.js';

// Grouped commits (group-commit.ts) on SQLite; the same calls on PostgreSQL, where each transaction
// commits on its own pooled connection.
describe(`grouped commits on ${testDialect}`, () => {
  let t: TestApp;
  const queries: string[] = [];
  const sqlite = testDialect === 'sqlite';
  before(async () => {
    t = await buildTestApp({}, { onQuery: (q) => queries.push(q) });
    // A table whose foreign key is checked at COMMIT: a way to make one COMMIT fail on either engine.
    await sql`create table gc_parent (id integer primary key)`.execute(t.ctx.db);
    await sql`create table gc_child (id integer primary key, parent_id integer not null references gc_parent (id) deferrable initially deferred)`.execute(t.ctx.db);
  });
  after(() => t.close());

  const now = '2026-01-05T12:00:00.000Z';
  const org = (slug: string) => ({ name: slug, slug, description: null, personal: 0 as const, created_at: now });
  const commits = () => queries.filter((q) => /^commit$/i.test(q.trim())).length;
  const orgExists = async (slug: string) => Boolean(await t.ctx.db.selectFrom('orgs').select('id').where('slug', '=', slug).executeTakeFirst());

  test('concurrent transactions share a COMMIT on SQLite (one each on PostgreSQL)', async () => {
    const n = 20;
    const before = commits();
    const ids = await Promise.all(
      Array.from({ length: n }, (_, i) => t.ctx.transaction(async (tx) => (await insertOrg(tx.db, org(`grouped-${i}`))).id)),
    );
    assert.equal(new Set(ids).size, n);
    const used = commits() - before;
    if (sqlite) assert.equal(used, 1, `${n} transactions queued in one loop turn commit together`);
    else assert.equal(used, n);
    for (let i = 0; i < n; i++) assert.ok(await orgExists(`grouped-${i}`));
  });

  test('a failing member rolls back only itself; its caller alone gets the error', async () => {
    const seen: string[] = [];
    // The duplicate is of a row committed before: on PostgreSQL the members run side by side, so a
    // duplicate of member a's row could make either of the two fail.
    await insertOrg(t.ctx.db, org('member-pre'));
    const results = await Promise.allSettled([
      t.ctx.transaction(async (tx) => {
        await insertOrg(tx.db, org('member-a'));
        tx.onCommit(() => void seen.push('a'));
      }),
      t.ctx.transaction(async (tx) => {
        await insertOrg(tx.db, org('member-b'));
        tx.onCommit(() => void seen.push('b'));
        throw new Error('b failed');
      }),
      t.ctx.transaction(async (tx) => {
        await insertOrg(tx.db, org('member-c'));
        tx.onCommit(() => void seen.push('c'));
      }),
      // A database error (duplicate slug) is a member's own failure too.
      t.ctx.transaction(async (tx) => {
        await insertOrg(tx.db, org('member-d'));
        await insertOrg(tx.db, org('member-pre'));
      }),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'rejected'],
    );
    assert.match(String((results[1] as PromiseRejectedResult).reason), /b failed/);
    // One group on SQLite commits in queue order; PostgreSQL's pool commits in whatever order the server does.
    assert.deepEqual(testDialect === 'sqlite' ? seen : [...seen].sort(), ['a', 'c'], 'hooks of committed members only, in commit order');
    assert.equal(await orgExists('member-a'), true);
    assert.equal(await orgExists('member-b'), false);
    assert.equal(await orgExists('member-c'), true);
    assert.equal(await orgExists('member-d'), false, 'the first insert of the failed member is rolled back too');
  });

  test('a failed COMMIT fails every member of the group on SQLite (only its own transaction on PostgreSQL)', async () => {
    const hooks: string[] = [];
    const results = await Promise.allSettled([
      t.ctx.transaction(async (tx) => {
        await insertOrg(tx.db, org('commit-x'));
        tx.onCommit(() => void hooks.push('x'));
      }),
      t.ctx.transaction(async (tx) => {
        // Valid until COMMIT checks the deferred foreign key.
        await sql`insert into gc_child (id, parent_id) values (1, 999)`.execute(tx.db);
        tx.onCommit(() => void hooks.push('orphan'));
      }),
      t.ctx.transaction(async (tx) => {
        await insertOrg(tx.db, org('commit-y'));
        tx.onCommit(() => void hooks.push('y'));
      }),
    ]);
    assert.equal(results[1].status, 'rejected');
    if (sqlite) {
      assert.deepEqual(
        results.map((r) => r.status),
        ['rejected', 'rejected', 'rejected'],
      );
      for (const r of results) assert.ok((r as PromiseRejectedResult).reason instanceof GroupCommitError);
      assert.deepEqual(hooks, []);
      assert.equal(await orgExists('commit-x'), false);
      assert.equal(await orgExists('commit-y'), false);
    } else {
      assert.deepEqual(hooks.sort(), ['x', 'y']);
      assert.equal(await orgExists('commit-x'), true);
    }
    assert.equal((await sql<{ n: number }>`select count(*) as n from gc_child`.execute(t.ctx.db)).rows[0]!.n, 0);
    // The connection is usable again afterwards.
    await t.ctx.transaction((tx) => insertOrg(tx.db, org('after-failed-commit')));
    assert.equal(await orgExists('after-failed-commit'), true);
  });

  test('hooks run after the commit, and a read outside the transaction never sees uncommitted rows', async () => {
    let outside: Promise<boolean> | undefined;
    const order: string[] = [];
    await assert.rejects(
      t.ctx.transaction(async (tx) => {
        await insertOrg(tx.db, org('uncommitted'));
        // Another request's read while this transaction is open (it waits for the connection on SQLite).
        outside = orgExists('uncommitted');
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.equal(await outside, false);

    const tx1 = t.ctx.transaction(async (tx) => {
      await insertOrg(tx.db, org('hooked'));
      tx.onCommit(async () => {
        order.push(`hook saw ${String(await orgExists('hooked'))}`);
      });
      order.push('fn done');
    });
    await tx1;
    order.push('resolved');
    assert.deepEqual(order, ['fn done', 'hook saw true', 'resolved']);
  });

  test('a transaction alone in its group runs without a savepoint, and its failure rolls it back', async () => {
    const from = queries.length;
    await t.ctx.transaction((tx) => insertOrg(tx.db, org('alone')));
    await assert.rejects(
      t.ctx.transaction(async (tx) => {
        await insertOrg(tx.db, org('alone-failed'));
        throw new Error('alone failed');
      }),
      /alone failed/,
    );
    assert.equal(queries.slice(from).filter((q) => /savepoint/i.test(q)).length, 0);
    assert.equal(await orgExists('alone'), true);
    assert.equal(await orgExists('alone-failed'), false);
  });

  test('a transaction opened inside another one is refused at once on SQLite (it would wait for itself)', async () => {
    const outcome = await t.ctx
      .transaction(async (tx) => {
        await insertOrg(tx.db, org('outer'));
        return t.ctx.transaction((inner) => insertOrg(inner.db, org('inner')));
      })
      .then(
        () => 'committed',
        (err: unknown) => String(err),
      );
    if (sqlite) {
      assert.match(outcome, /inside a transaction/);
      assert.equal(await orgExists('outer'), false);
    } else assert.equal(outcome, 'committed');
  });

  test('a nested transaction is refused before its caller waits on anything else (not left waiting for its own group)', async () => {
    let inner: Promise<string> | undefined;
    const outcome = await t.ctx
      .transaction(async (tx) => {
        await insertOrg(tx.db, org('nested-outer'));
        inner = t.ctx.transaction((i) => insertOrg(i.db, org('nested-inner'))).then(
          () => 'committed',
          (err: unknown) => String(err),
        );
        // Without the guard the inner transaction is queued behind this one: still waiting a loop turn later.
        return Promise.race([inner, new Promise<string>((resolve) => setImmediate(() => resolve('waiting')))]);
      })
      .catch((err: unknown) => `outer failed: ${String(err)}`);
    if (sqlite) {
      assert.match(outcome, /inside a transaction/);
      assert.match((await inner)!, /inside a transaction/);
      assert.equal(await orgExists('nested-inner'), false);
    } else assert.equal(await inner, 'committed', 'each PostgreSQL transaction has a connection of its own');
  });

  test('another request\'s transaction asked for while a body waits on I/O or a timer is queued, not refused', async () => {
    let started!: () => void;
    const bodyWaits = new Promise<void>((resolve) => (started = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = t.ctx.transaction(async (tx) => {
      await insertOrg(tx.db, org('io-slow'));
      started();
      await gate;
    });
    await bodyWaits;
    // A later macrotask: another request arriving while the body waits.
    await new Promise((resolve) => setImmediate(resolve));
    const other = t.ctx.transaction((tx) => insertOrg(tx.db, org('io-other')));
    release();
    await slow;
    await other;
    assert.equal(await orgExists('io-other'), true);
  });

  test('a caller whose transaction failed in a group may start another one at once (not taken for a nested one)', async () => {
    const hops = async (n: number) => {
      for (let i = 0; i < n; i++) await Promise.resolve();
    };
    const retried = t.ctx
      .transaction(async () => {
        throw new Error('first try failed');
      })
      .catch(async () => {
        await hops(100); // past the failed member's rollback to its savepoint
        return t.ctx.transaction((tx) => insertOrg(tx.db, org('retried')));
      });
    // The next member's body is still running when the failed caller's retry comes, if it hears of its failure at once.
    const neighbour = t.ctx.transaction(async (tx) => {
      await hops(1000);
      await insertOrg(tx.db, org('retry-neighbour'));
    });
    await neighbour;
    await retried;
    assert.equal(await orgExists('retried'), true);
  });

  test('on SQLite a long transaction holds its group; those queued behind it commit after it, in order', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const done: string[] = [];
    const slow = t.ctx.transaction(async (tx) => {
      await insertOrg(tx.db, org('slow'));
      await gate;
    });
    const fast = [1, 2, 3].map((i) => t.ctx.transaction((tx) => insertOrg(tx.db, org(`behind-${i}`))).then(() => done.push(`behind-${i}`)));
    if (!sqlite) {
      // Each PostgreSQL transaction has its own connection: nothing waits for the slow one.
      await Promise.all(fast);
      release();
      await slow;
      assert.deepEqual(done.sort(), ['behind-1', 'behind-2', 'behind-3']);
      return;
    }
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(done, []);
    release();
    await slow;
    await Promise.all(fast);
    assert.deepEqual(done, ['behind-1', 'behind-2', 'behind-3']);
  });

  // SQLite's file-wide write lock, held by another process, has no PostgreSQL counterpart.
  if (sqlite) test('SQLITE_BUSY from another process fails the group; the next group runs', async () => {
    const other = new SQLite(path.join(t.ctx.config.dataDir, 'muster.db'));
    await sql`pragma busy_timeout = 20`.execute(t.ctx.db);
    try {
      other.exec('begin immediate');
      const results = await Promise.allSettled([1, 2].map((i) => t.ctx.transaction((tx) => insertOrg(tx.db, org(`busy-${i}`)))));
      for (const r of results) {
        assert.equal(r.status, 'rejected');
        assert.match(String((r).reason), /locked|busy/i);
      }
      other.exec('rollback');
      await t.ctx.transaction((tx) => insertOrg(tx.db, org('busy-after')));
      assert.equal(await orgExists('busy-after'), true);
      assert.equal(await orgExists('busy-1'), false);
    } finally {
      other.close();
      await sql`pragma busy_timeout = 5000`.execute(t.ctx.db);
    }
  });
});
