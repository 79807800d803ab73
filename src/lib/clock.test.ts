import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { iso } from './clock.js';

// iso() keeps the text of the last millisecond it was asked for: the answer must never depend on it.
describe('iso', () => {
  test('the text of each date, whatever was asked before (same millisecond, other dates, back and forth)', () => {
    const times = [0, 1_700_000_000_000, 1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_000, -1, 253_402_300_799_999, 1_700_000_000_001];
    for (const ms of times) {
      const d = new Date(ms);
      assert.equal(iso(d), d.toISOString(), String(ms));
      assert.equal(iso(new Date(ms)), new Date(ms).toISOString(), `${ms}, another Date of the same time`);
    }
  });

  test('an invalid date throws, as toISOString does, and is never answered from the kept text', () => {
    iso(new Date(5));
    assert.throws(() => iso(new Date(Number.NaN)), RangeError);
    assert.throws(() => iso(new Date('not a date')), RangeError);
    assert.equal(iso(new Date(5)), new Date(5).toISOString());
  });
});
