import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { layerRows, resolve, type History, type Interval, type LayerSpec, type OverrideSpec, type Version } from './resolver.js';
import { instantOf, parseLocal } from './zone.js';

const t = (s: string): number => {
  const ms = Date.parse(s);
  assert.ok(Number.isFinite(ms), `bad ISO in test: ${s}`);
  return ms;
};
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const FOREVER: Interval[] = [{ start: 0, end: 8.64e15 }];
const everyone = (...ids: number[]) => new Map(ids.map((id) => [id, FOREVER]));

function layer(id: string, over: Partial<LayerSpec> = {}): LayerSpec {
  return { id, name: id, start: '2026-01-05T09:00', turn: { unit: 'day', length: 1 }, users: [1, 2, 3], ...over };
}
function history(zone: string, layers: LayerSpec[], over: Partial<History> = {}): History {
  return { versions: [{ from: 0, timeZone: zone, layers }], overrides: [], membership: everyone(1, 2, 3, 4, 5), ...over };
}
/** The final shifts as `user start end` lines (UTC), easy to read in a failure. */
function lines(h: History, from: string, to: string): string[] {
  return resolve(h, t(from), t(to)).shifts.map((s) => `${s.userId} ${iso(s.start)} ${iso(s.end)}`);
}
/** Handoff instants (starts of the final shifts) in the range. */
function handoffs(h: History, from: string, to: string): string[] {
  return resolve(h, t(from), t(to)).shifts.map((s) => iso(s.start));
}

describe('zone arithmetic', () => {
  test('a time in the spring-forward gap maps to the first instant after it; an ambiguous one to its first occurrence', () => {
    const cases: [string, string, string][] = [
      ['Europe/London', '2026-03-29T01:30', '2026-03-29T01:00:00Z'],
      ['Europe/London', '2026-10-25T01:30', '2026-10-25T00:30:00Z'],
      ['America/New_York', '2026-03-08T02:30', '2026-03-08T07:00:00Z'],
      ['America/New_York', '2026-11-01T01:30', '2026-11-01T05:30:00Z'],
      ['Australia/Sydney', '2026-10-04T02:30', '2026-10-03T16:00:00Z'],
      ['Australia/Sydney', '2026-04-05T02:30', '2026-04-04T15:30:00Z'],
      ['Australia/Lord_Howe', '2026-10-04T02:15', '2026-10-03T15:30:00Z'],
      ['Asia/Kathmandu', '2026-06-01T09:00', '2026-06-01T03:15:00Z'],
    ];
    for (const [zone, local, want] of cases) assert.equal(iso(instantOf(zone, parseLocal(local)!)), want, `${zone} ${local}`);
  });
});

describe('turn arithmetic', () => {
  test('day turns hand off daily at the start time, in order, wrapping around the users', () => {
    const h = history('UTC', [layer('a', { users: [1, 2, 3] })]);
    assert.deepEqual(lines(h, '2026-01-05T00:00:00Z', '2026-01-09T09:00:00Z'), [
      '1 2026-01-05T09:00:00Z 2026-01-06T09:00:00Z',
      '2 2026-01-06T09:00:00Z 2026-01-07T09:00:00Z',
      '3 2026-01-07T09:00:00Z 2026-01-08T09:00:00Z',
      '1 2026-01-08T09:00:00Z 2026-01-09T09:00:00Z',
    ]);
    // Before the start the layer has nobody: a gap.
    assert.deepEqual(resolve(h, t('2026-01-05T00:00:00Z'), t('2026-01-06T00:00:00Z')).gaps.map((g) => [iso(g.start), iso(g.end)]), [['2026-01-05T00:00:00Z', '2026-01-05T09:00:00Z']]);
  });

  test('a turn of n days; a turn of n weeks; a turn of n hours; a user listed twice has two turns', () => {
    const days = history('UTC', [layer('a', { turn: { unit: 'day', length: 3 }, users: [1, 2] })]);
    assert.deepEqual(handoffs(days, '2026-01-05T09:00:00Z', '2026-01-14T09:00:00Z'), ['2026-01-05T09:00:00Z', '2026-01-08T09:00:00Z', '2026-01-11T09:00:00Z']);
    const weeks = history('UTC', [layer('a', { turn: { unit: 'week', length: 2 }, users: [1, 2] })]);
    assert.deepEqual(lines(weeks, '2026-01-05T09:00:00Z', '2026-02-02T09:00:00Z'), ['1 2026-01-05T09:00:00Z 2026-01-19T09:00:00Z', '2 2026-01-19T09:00:00Z 2026-02-02T09:00:00Z']);
    const hours = history('UTC', [layer('a', { turn: { unit: 'hour', length: 8 }, users: [1, 2, 1, 3] })]);
    assert.deepEqual(lines(hours, '2026-01-05T09:00:00Z', '2026-01-06T17:00:00Z'), [
      '1 2026-01-05T09:00:00Z 2026-01-05T17:00:00Z',
      '2 2026-01-05T17:00:00Z 2026-01-06T01:00:00Z',
      '1 2026-01-06T01:00:00Z 2026-01-06T09:00:00Z',
      '3 2026-01-06T09:00:00Z 2026-01-06T17:00:00Z',
    ]);
  });

  test('the turn index counts handoffs since the start, whatever the range asked', () => {
    const h = history('UTC', [layer('a', { users: [1, 2, 3] })]);
    // 100 days after the start: turn 100, 100 mod 3 = 1 -> user 2.
    assert.deepEqual(lines(h, '2026-04-15T10:00:00Z', '2026-04-15T11:00:00Z'), ['2 2026-04-15T10:00:00Z 2026-04-15T11:00:00Z']);
  });

  test('one user on every turn is one shift; pieces of one user and source merge', () => {
    const h = history('UTC', [layer('a', { turn: { unit: 'hour', length: 1 }, users: [7] })], { membership: everyone(7) });
    assert.deepEqual(lines(h, '2026-01-06T00:00:00Z', '2026-01-08T00:00:00Z'), ['7 2026-01-06T00:00:00Z 2026-01-08T00:00:00Z']);
  });

  test('a start given with an offset is that instant; day turns keep its local clock time', () => {
    const h = history('Europe/London', [layer('a', { start: '2026-03-27T10:00:00+01:00', users: [1, 2] })]);
    // 10:00+01:00 is 09:00 GMT in London: daily 09:00 London time, 08:00Z once summer time starts.
    assert.deepEqual(handoffs(h, '2026-03-27T09:00:00Z', '2026-03-31T00:00:00Z'), ['2026-03-27T09:00:00Z', '2026-03-28T09:00:00Z', '2026-03-29T08:00:00Z', '2026-03-30T08:00:00Z']);
  });
});

describe('handoffs across daylight saving', () => {
  // [zone, layer start (local), range from, to, expected handoffs in UTC]
  const cases: [string, string, string, string, string[]][] = [
    // Europe/London: clocks forward 29 March 01:00Z, back 25 October 01:00Z.
    ['Europe/London', '2026-03-27T09:00', '2026-03-28T00:00:00Z', '2026-03-31T00:00:00Z', ['2026-03-28T09:00:00Z', '2026-03-29T08:00:00Z', '2026-03-30T08:00:00Z']],
    ['Europe/London', '2026-10-23T09:00', '2026-10-24T00:00:00Z', '2026-10-27T00:00:00Z', ['2026-10-24T08:00:00Z', '2026-10-25T09:00:00Z', '2026-10-26T09:00:00Z']],
    // America/New_York: forward 8 March 07:00Z, back 1 November 06:00Z.
    ['America/New_York', '2026-03-06T09:00', '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z', ['2026-03-07T14:00:00Z', '2026-03-08T13:00:00Z', '2026-03-09T13:00:00Z']],
    ['America/New_York', '2026-10-30T09:00', '2026-10-31T00:00:00Z', '2026-11-03T00:00:00Z', ['2026-10-31T13:00:00Z', '2026-11-01T14:00:00Z', '2026-11-02T14:00:00Z']],
    // Australia/Sydney (southern hemisphere): back 5 April (AEDT+11 -> AEST+10), forward 4 October.
    ['Australia/Sydney', '2026-04-03T09:00', '2026-04-03T12:00:00Z', '2026-04-06T12:00:00Z', ['2026-04-03T22:00:00Z', '2026-04-04T23:00:00Z', '2026-04-05T23:00:00Z']],
    ['Australia/Sydney', '2026-10-02T09:00', '2026-10-02T12:00:00Z', '2026-10-05T12:00:00Z', ['2026-10-02T23:00:00Z', '2026-10-03T22:00:00Z', '2026-10-04T22:00:00Z']],
  ];
  for (const [zone, start, from, to, want] of cases) {
    test(`${zone}: daily 09:00 handoffs stay at 09:00 local around ${from.slice(0, 10)}`, () => {
      const h = history(zone, [layer('a', { start, users: [1, 2] })]);
      assert.deepEqual(handoffs(h, from, to).slice(1), want);
    });
  }

  test('a handoff time skipped by the clocks happens when they jump; an ambiguous one at its first occurrence', () => {
    // 01:30 London daily: 29 March has no 01:30 (01:00 GMT -> 02:00 BST); 25 October has two.
    const london = history('Europe/London', [layer('a', { start: '2026-03-27T01:30', users: [1, 2] })]);
    assert.deepEqual(handoffs(london, '2026-03-28T00:00:00Z', '2026-03-31T00:00:00Z').slice(1), ['2026-03-28T01:30:00Z', '2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z']);
    const londonBack = history('Europe/London', [layer('a', { start: '2026-10-23T01:30', users: [1, 2] })]);
    assert.deepEqual(handoffs(londonBack, '2026-10-24T00:00:00Z', '2026-10-27T00:00:00Z').slice(1), ['2026-10-24T00:30:00Z', '2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z']);
    // 02:30 New York: skipped on 8 March (handoff at 03:00 EDT = 07:00Z).
    const ny = history('America/New_York', [layer('a', { start: '2026-03-06T02:30', users: [1, 2] })]);
    assert.deepEqual(handoffs(ny, '2026-03-07T00:00:00Z', '2026-03-10T00:00:00Z').slice(1), ['2026-03-07T07:30:00Z', '2026-03-08T07:00:00Z', '2026-03-09T06:30:00Z']);
    // 02:30 Sydney: ambiguous on 5 April (first: 02:30 AEDT = 15:30Z), skipped on 4 October (03:00 AEDT = 16:00Z).
    const syd = history('Australia/Sydney', [layer('a', { start: '2026-04-03T02:30', users: [1, 2] })]);
    assert.deepEqual(handoffs(syd, '2026-04-03T00:00:00Z', '2026-04-06T00:00:00Z').slice(1), ['2026-04-03T15:30:00Z', '2026-04-04T15:30:00Z', '2026-04-05T16:30:00Z']);
    const sydSpring = history('Australia/Sydney', [layer('a', { start: '2026-10-02T02:30', users: [1, 2] })]);
    assert.deepEqual(handoffs(sydSpring, '2026-10-02T00:00:00Z', '2026-10-05T00:00:00Z').slice(1), ['2026-10-02T16:30:00Z', '2026-10-03T16:00:00Z', '2026-10-04T15:30:00Z']);
  });

  test('week turns are seven calendar days (167 or 169 hours across a change), hour turns elapsed hours', () => {
    const week = history('Europe/London', [layer('a', { start: '2026-03-23T09:00', turn: { unit: 'week', length: 1 }, users: [1, 2] })]);
    assert.deepEqual(handoffs(week, '2026-03-23T09:00:00Z', '2026-04-07T00:00:00Z'), ['2026-03-23T09:00:00Z', '2026-03-30T08:00:00Z', '2026-04-06T08:00:00Z']);
    const autumn = history('America/New_York', [layer('a', { start: '2026-10-26T09:00', turn: { unit: 'week', length: 1 }, users: [1, 2] })]);
    assert.deepEqual(handoffs(autumn, '2026-10-26T13:00:00Z', '2026-11-03T00:00:00Z'), ['2026-10-26T13:00:00Z', '2026-11-02T14:00:00Z']);
    // 12-hour turns from 20:00 GMT: the clock change does not move them in absolute time.
    const hours = history('Europe/London', [layer('a', { start: '2026-03-28T20:00', turn: { unit: 'hour', length: 12 }, users: [1, 2] })]);
    assert.deepEqual(handoffs(hours, '2026-03-28T20:00:00Z', '2026-03-30T08:00:00Z'), ['2026-03-28T20:00:00Z', '2026-03-29T08:00:00Z', '2026-03-29T20:00:00Z']);
  });

  test('restriction windows are local time on both sides of a change', () => {
    // 09:00-17:00 London weekdays, around 29 March (a Sunday): Friday in GMT, Monday in BST.
    const h = history('Europe/London', [layer('a', { start: '2026-03-20T00:00', turn: { unit: 'week', length: 1 }, users: [1], restrictions: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_time: '09:00', end_time: '17:00' }] })], { membership: everyone(1) });
    assert.deepEqual(lines(h, '2026-03-27T00:00:00Z', '2026-03-31T00:00:00Z'), ['1 2026-03-27T09:00:00Z 2026-03-27T17:00:00Z', '1 2026-03-30T08:00:00Z 2026-03-30T16:00:00Z']);
  });
});

describe('layer precedence and restrictions', () => {
  const base = layer('base', { start: '2026-01-05T00:00', turn: { unit: 'week', length: 1 }, users: [1] });

  test('a later layer wins where it has someone; earlier layers show through outside its windows', () => {
    const day = layer('day', { start: '2026-01-05T00:00', users: [2, 3], restrictions: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_time: '09:00', end_time: '17:00' }] });
    const h = history('UTC', [base, day]);
    assert.deepEqual(lines(h, '2026-01-09T00:00:00Z', '2026-01-12T12:00:00Z'), [
      '1 2026-01-09T00:00:00Z 2026-01-09T09:00:00Z',
      // Friday 9 January is turn 4 of the day layer: users[4 mod 2] = 2.
      '2 2026-01-09T09:00:00Z 2026-01-09T17:00:00Z',
      '1 2026-01-09T17:00:00Z 2026-01-12T09:00:00Z',
      '3 2026-01-12T09:00:00Z 2026-01-12T12:00:00Z',
    ]);
    // The order decides: with the restricted layer first, the all-time layer hides it.
    assert.deepEqual(lines(history('UTC', [day, base]), '2026-01-09T00:00:00Z', '2026-01-10T00:00:00Z'), ['1 2026-01-09T00:00:00Z 2026-01-10T00:00:00Z']);
  });

  test('a window past midnight belongs to the day it starts on; equal times are a whole day', () => {
    const night = layer('night', { start: '2026-01-05T00:00', turn: { unit: 'week', length: 1 }, users: [2], restrictions: [{ days: ['fri'], start_time: '22:00', end_time: '06:00' }] });
    assert.deepEqual(lines(history('UTC', [base, night]), '2026-01-09T00:00:00Z', '2026-01-11T00:00:00Z'), [
      '1 2026-01-09T00:00:00Z 2026-01-09T22:00:00Z',
      '2 2026-01-09T22:00:00Z 2026-01-10T06:00:00Z',
      '1 2026-01-10T06:00:00Z 2026-01-11T00:00:00Z',
    ]);
    const wholeDay = layer('sat', { start: '2026-01-05T00:00', turn: { unit: 'week', length: 1 }, users: [2], restrictions: [{ days: ['sat'], start_time: '08:00', end_time: '08:00' }] });
    assert.deepEqual(lines(history('UTC', [base, wholeDay]), '2026-01-10T00:00:00Z', '2026-01-12T00:00:00Z'), [
      '1 2026-01-10T00:00:00Z 2026-01-10T08:00:00Z',
      '2 2026-01-10T08:00:00Z 2026-01-11T08:00:00Z',
      '1 2026-01-11T08:00:00Z 2026-01-12T00:00:00Z',
    ]);
  });

  test('the rotation keeps advancing through masked time', () => {
    // Daily turns of 1, 2, 3 but only on weekdays 09-17: Saturday and Sunday are turns too.
    const l = layer('a', { start: '2026-01-05T00:00', users: [1, 2, 3], restrictions: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start_time: '09:00', end_time: '17:00' }] });
    const who = resolve(history('UTC', [l]), t('2026-01-09T00:00:00Z'), t('2026-01-13T00:00:00Z')).shifts.map((s) => s.userId);
    // Friday turn 4 -> 2; Monday 12 January is turn 7 -> 2; Saturday (turn 5) and Sunday (6) are masked.
    assert.deepEqual(who, [2, 2]);
  });

  test('no restrictions: the layer covers all time; gaps are where no layer has anyone', () => {
    const day = layer('day', { start: '2026-01-05T00:00', users: [2], restrictions: [{ start_time: '09:00', end_time: '17:00' }] });
    const r = resolve(history('UTC', [day], { membership: everyone(2) }), t('2026-01-06T00:00:00Z'), t('2026-01-07T00:00:00Z'));
    assert.deepEqual(r.gaps.map((g) => `${iso(g.start)} ${iso(g.end)}`), ['2026-01-06T00:00:00Z 2026-01-06T09:00:00Z', '2026-01-06T17:00:00Z 2026-01-07T00:00:00Z']);
  });

  test('layer rows show each layer alone (for the timeline)', () => {
    const day = layer('day', { start: '2026-01-05T00:00', users: [2], restrictions: [{ start_time: '09:00', end_time: '17:00' }] });
    const rows = layerRows(history('UTC', [base, day]), t('2026-01-06T00:00:00Z'), t('2026-01-07T00:00:00Z'));
    assert.deepEqual([...rows.keys()], ['base', 'day']);
    assert.deepEqual(rows.get('base')!.shifts.map((s) => `${s.userId} ${iso(s.start)} ${iso(s.end)}`), ['1 2026-01-06T00:00:00Z 2026-01-07T00:00:00Z']);
    assert.deepEqual(rows.get('day')!.shifts.map((s) => `${s.userId} ${iso(s.start)} ${iso(s.end)}`), ['2 2026-01-06T09:00:00Z 2026-01-06T17:00:00Z']);
  });
});

describe('overrides', () => {
  const base = layer('base', { start: '2026-01-05T00:00', turn: { unit: 'week', length: 1 }, users: [1] });
  const o = (id: number, userId: number, start: string, end: string, order = id): OverrideSpec => ({ id, userId, start: t(start), end: t(end), order });

  test('an override beats every layer and splits the shift around it', () => {
    const h = history('UTC', [base], { overrides: [o(10, 4, '2026-01-06T12:00:00Z', '2026-01-06T14:00:00Z')] });
    const r = resolve(h, t('2026-01-06T00:00:00Z'), t('2026-01-07T00:00:00Z'));
    assert.deepEqual(
      r.shifts.map((s) => [s.userId, iso(s.start), iso(s.end), s.source]),
      [
        [1, '2026-01-06T00:00:00Z', '2026-01-06T12:00:00Z', { type: 'layer', layer_id: 'base' }],
        [4, '2026-01-06T12:00:00Z', '2026-01-06T14:00:00Z', { type: 'override', override_id: 10 }],
        [1, '2026-01-06T14:00:00Z', '2026-01-07T00:00:00Z', { type: 'layer', layer_id: 'base' }],
      ],
    );
  });

  test('overlapping overrides: the newest wins', () => {
    const h = history('UTC', [base], { overrides: [o(10, 4, '2026-01-06T10:00:00Z', '2026-01-06T14:00:00Z', 1), o(11, 5, '2026-01-06T12:00:00Z', '2026-01-06T16:00:00Z', 2)] });
    assert.deepEqual(lines(h, '2026-01-06T09:00:00Z', '2026-01-06T17:00:00Z'), [
      '1 2026-01-06T09:00:00Z 2026-01-06T10:00:00Z',
      '4 2026-01-06T10:00:00Z 2026-01-06T12:00:00Z',
      '5 2026-01-06T12:00:00Z 2026-01-06T16:00:00Z',
      '1 2026-01-06T16:00:00Z 2026-01-06T17:00:00Z',
    ]);
    // The same two with the older one newer: it covers its whole window.
    const swapped = history('UTC', [base], { overrides: [o(10, 4, '2026-01-06T10:00:00Z', '2026-01-06T14:00:00Z', 3), o(11, 5, '2026-01-06T12:00:00Z', '2026-01-06T16:00:00Z', 2)] });
    assert.deepEqual(lines(swapped, '2026-01-06T09:00:00Z', '2026-01-06T17:00:00Z').slice(1, 3), ['4 2026-01-06T10:00:00Z 2026-01-06T14:00:00Z', '5 2026-01-06T14:00:00Z 2026-01-06T16:00:00Z']);
  });

  test('an override fills a gap', () => {
    const day = layer('day', { start: '2026-01-05T00:00', users: [2], restrictions: [{ start_time: '09:00', end_time: '17:00' }] });
    const h = history('UTC', [day], { overrides: [o(10, 4, '2026-01-06T17:00:00Z', '2026-01-06T20:00:00Z')] });
    const r = resolve(h, t('2026-01-06T09:00:00Z'), t('2026-01-06T21:00:00Z'));
    assert.deepEqual(r.gaps.map((g) => `${iso(g.start)} ${iso(g.end)}`), ['2026-01-06T20:00:00Z 2026-01-06T21:00:00Z']);
  });
});

describe('history', () => {
  const v1: Version = { from: t('2026-01-01T00:00:00Z'), timeZone: 'UTC', layers: [layer('a', { users: [1, 2] })] };
  const v2: Version = { from: t('2026-01-10T12:00:00Z'), timeZone: 'UTC', layers: [layer('a', { users: [3] })] };

  test('an edit applies from its moment: earlier answers do not change', () => {
    const before = history('UTC', [], { versions: [v1] });
    const after = history('UTC', [], { versions: [v1, v2] });
    assert.deepEqual(lines(after, '2026-01-06T00:00:00Z', '2026-01-10T12:00:00Z'), lines(before, '2026-01-06T00:00:00Z', '2026-01-10T12:00:00Z'));
    assert.deepEqual(lines(after, '2026-01-10T00:00:00Z', '2026-01-11T00:00:00Z'), ['1 2026-01-10T00:00:00Z 2026-01-10T09:00:00Z', '2 2026-01-10T09:00:00Z 2026-01-10T12:00:00Z', '3 2026-01-10T12:00:00Z 2026-01-11T00:00:00Z']);
  });

  test('before the first version there is no schedule (no gap); a deleted schedule has nobody from its deletion', () => {
    const h = history('UTC', [], { versions: [v1, { from: t('2026-01-08T00:00:00Z'), timeZone: 'UTC', layers: [], ended: true }] });
    const r = resolve(h, t('2025-12-31T00:00:00Z'), t('2026-01-09T00:00:00Z'));
    assert.equal(iso(r.shifts[r.shifts.length - 1]!.end), '2026-01-08T00:00:00Z');
    assert.deepEqual(r.gaps.map((g) => iso(g.start)), ['2026-01-01T00:00:00Z']);
  });

  test('a member who leaves: their turns become gaps from that moment, and their overrides end', () => {
    const membership = new Map([
      [1, FOREVER],
      [2, [{ start: 0, end: t('2026-01-07T12:00:00Z') }]],
      [4, [{ start: 0, end: t('2026-01-07T12:00:00Z') }]],
    ]);
    const h = history('UTC', [layer('a', { start: '2026-01-05T09:00', users: [1, 2] })], { membership, overrides: [{ id: 9, userId: 4, start: t('2026-01-07T10:00:00Z'), end: t('2026-01-07T14:00:00Z'), order: 1 }] });
    const r = resolve(h, t('2026-01-06T09:00:00Z'), t('2026-01-09T09:00:00Z'));
    assert.deepEqual(r.shifts.map((s) => `${s.userId} ${iso(s.start)} ${iso(s.end)}`), [
      '2 2026-01-06T09:00:00Z 2026-01-07T09:00:00Z',
      '1 2026-01-07T09:00:00Z 2026-01-07T10:00:00Z',
      '4 2026-01-07T10:00:00Z 2026-01-07T12:00:00Z',
      '1 2026-01-07T12:00:00Z 2026-01-08T09:00:00Z',
    ]);
    // User 2's next turn (8-9 January) is a gap; the rotation did not close up.
    assert.deepEqual(r.gaps.map((g) => `${iso(g.start)} ${iso(g.end)}`), ['2026-01-08T09:00:00Z 2026-01-09T09:00:00Z']);
  });

  test('where a later layer loses its member, the earlier layer shows through', () => {
    const membership = new Map([[1, FOREVER], [2, [{ start: 0, end: t('2026-01-06T12:00:00Z') }]]]);
    const h = history('UTC', [layer('base', { users: [1] }), layer('top', { users: [2] })], { membership });
    assert.deepEqual(lines(h, '2026-01-06T09:00:00Z', '2026-01-07T09:00:00Z'), ['2 2026-01-06T09:00:00Z 2026-01-06T12:00:00Z', '1 2026-01-06T12:00:00Z 2026-01-07T09:00:00Z']);
  });
});
