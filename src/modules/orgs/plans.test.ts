import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError } from '../../lib/errors.js';
import { PLAN_LIMITS, assertRoomFor, isLockedAt, withLocks } from './plans.js';

describe('plan limits and the lock rule', () => {
  test('the plan table of the specification', () => {
    assert.equal(PLAN_LIMITS.free.eventTypes, 3);
    assert.equal(PLAN_LIMITS.starter.eventTypes, 10);
    assert.equal(PLAN_LIMITS.agency.eventTypes, Infinity);
    assert.deepEqual([PLAN_LIMITS.agency.orgs, PLAN_LIMITS.agency.teamsPerOrg, PLAN_LIMITS.agency.membersPerTeam], [1, 5, 25]);
    assert.deepEqual(Object.values(PLAN_LIMITS.enterprise), [Infinity, Infinity, Infinity, Infinity]);
    for (const plan of ['free', 'starter'] as const) assert.equal(PLAN_LIMITS[plan].orgs + PLAN_LIMITS[plan].teamsPerOrg, 0);
  });

  test('the oldest N stay usable, the rest are locked', () => {
    assert.deepEqual(withLocks(['a', 'b', 'c'], 2).map((x) => x.locked), [false, false, true]);
    assert.deepEqual(withLocks([{ id: 1 }], Infinity), [{ id: 1, locked: false }]);
    assert.deepEqual(withLocks([1, 2].map((id) => ({ id })), 5, true).map((x) => x.locked), [true, true]);
    assert.equal(isLockedAt(0, 0), true);
    assert.equal(isLockedAt(4, 5), false);
    assert.equal(isLockedAt(5, 5), true);
  });

  test('creation is refused once the limit is filled', () => {
    assert.doesNotThrow(() => assertRoomFor(2, 3));
    assert.throws(
      () => assertRoomFor(3, 3),
      (e: unknown) => e instanceof AppError && e.status === 403 && e.code === 'upgrade_required',
    );
    assert.doesNotThrow(() => assertRoomFor(1_000_000, Infinity));
  });
});
