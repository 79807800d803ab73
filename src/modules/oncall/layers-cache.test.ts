// The parsed layers of a schedule version are cached per process by the version's row id. Two
// databases in one process (the benchmarks run one after another in one process) number their
// versions alike; so does SQLite after the newest version is deleted with its org. Each database's
// schedule must still answer its own people.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dispatchWorld, type DispatchWorld } from '../../../test/world.js';
import { whoIsOnCall } from './index.js';

describe('on-call layers cached by version id, checked against the stored text', () => {
  let one: DispatchWorld;
  let two: DispatchWorld;
  before(async () => {
    one = await dispatchWorld();
    two = await dispatchWorld();
  });
  after(async () => {
    await one.close();
    await two.close();
  });

  const schedule = async (w: DispatchWorld, userId: number) =>
    (await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, { name: 'Primary', time_zone: 'UTC', layers: [{ start: '2026-01-01T00:00', turn: { unit: 'week', length: 1 }, users: [userId] }] })).id;

  test("two databases in one process, versions with the same id: each schedule answers its own person", async () => {
    const a = await schedule(one, one.ann.id);
    const b = await schedule(two, two.ben.id);
    const at = one.t.clock.now().getTime();
    const versionIds = async (w: DispatchWorld) => (await w.t.ctx.db.selectFrom('oncall_layer_versions').select('id').execute()).map((r) => r.id);
    assert.deepEqual(await versionIds(one), await versionIds(two), 'the same version ids in both databases (the case under test)');
    assert.equal((await whoIsOnCall(one.t.ctx, one.orgId, a, at))?.userId, one.ann.id);
    assert.equal((await whoIsOnCall(two.t.ctx, two.orgId, b, at))?.userId, two.ben.id, 'not the layers parsed from the other database');
    assert.equal((await whoIsOnCall(one.t.ctx, one.orgId, a, at))?.userId, one.ann.id);
  });
});
