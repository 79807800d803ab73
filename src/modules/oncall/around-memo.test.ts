// Who is on call, kept per schedule between questions (around-memo.ts, issue #40), on both databases:
// the org view and whoIsOnCall answer what a fresh resolution answers after a handoff passes (the
// clock moved), after an override is added or ended, after the layers change, after a member leaves,
// and with the clock set back. The first test shows that the memo really serves: a row written
// behind the API's back (no version moved) is not seen until the version moves.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Headers } from '../../../test/helpers.js';
import { dispatchWorld, signInAgain, type DispatchWorld } from '../../../test/world.js';
import { finalShifts, whoIsOnCall } from './index.js';

const HOUR = 3_600_000;

interface ShiftOut {
  user_id: number;
  start: string;
  end: string;
}
interface OrgView {
  schedules: { id: number; on_call: ShiftOut[]; next: ShiftOut[] }[];
}

describe('on-call memo: the same answers as without it', () => {
  let w: DispatchWorld;
  let admin: Headers;
  let base: string;
  before(async () => {
    w = await dispatchWorld();
    w.t.clock.set('2026-03-02T12:00:00.000Z'); // a Monday
    await signInAgain(w);
    admin = w.as(w.admin);
    base = `/v1/orgs/${w.orgSlug}/schedules`;
  });
  after(() => w.close());

  /** A schedule of daily turns from Monday 09:00 UTC: Ann, Ben, Ann... */
  const daily = async (name: string) =>
    (await w.ok<{ id: number }>(admin, 'POST', base, { name, time_zone: 'UTC', layers: [{ name: 'Days', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] }] })).id;

  /** Who the org view says is on call now and next in schedule `id`, as [user, start, end]. */
  async function view(id: number) {
    const org = await w.ok<OrgView>(w.as(w.ann), 'GET', `/v1/orgs/${w.orgSlug}/on-call`);
    const s = org.schedules.find((x) => x.id === id)!;
    const row = (x: ShiftOut | undefined) => (x ? [x.user_id, x.start, x.end] : undefined);
    return { now: row(s.on_call[0]), next: row(s.next[0]) };
  }

  /** The same from the final shifts of two days either side (no memo on that path), at the clock's now. */
  async function fresh(id: number) {
    const at = w.t.clock.nowMs();
    const { shifts } = await finalShifts(w.t.ctx, w.orgId, id, at - 48 * HOUR, at + 48 * HOUR);
    const i = shifts.findIndex((s) => s.end > at);
    const current = i >= 0 && shifts[i]!.start <= at ? shifts[i] : undefined;
    const next = current ? shifts[i + 1] : shifts[i];
    const row = (x: (typeof shifts)[number] | undefined) => (x ? [x.userId, new Date(x.start).toISOString(), new Date(x.end).toISOString()] : undefined);
    return { now: row(current), next: row(next) };
  }

  /** The org view, whoIsOnCall and a fresh resolution agree; answers the org view's. */
  async function agreed(id: number, what: string) {
    const v = await view(id);
    assert.deepEqual(v, await fresh(id), `${what}: the org view against a fresh resolution`);
    assert.equal((await whoIsOnCall(w.t.ctx, w.orgId, id, w.t.clock.nowMs()))?.userId, v.now?.[0], `${what}: whoIsOnCall`);
    return v;
  }

  test('held: a row written behind the API (version not moved) is not seen until the version moves', async () => {
    const id = await daily('Held');
    assert.equal((await agreed(id, 'at first')).now?.[0], w.ann.id);
    const now = w.t.clock.now().toISOString();
    await w.t.ctx.db
      .insertInto('oncall_overrides')
      .values({ schedule_id: id, user_id: w.ben.id, start_time: now, end_time: new Date(w.t.clock.nowMs() + HOUR).toISOString(), created_by: null, created_at: now })
      .execute();
    assert.equal((await view(id)).now?.[0], w.ann.id, 'the memo answers (the case the other tests rely on)');
    await w.t.ctx.db.updateTable('oncall_schedules').set((eb) => ({ version: eb('version', '+', 1) })).where('id', '=', id).execute();
    assert.equal((await agreed(id, 'version moved')).now?.[0], w.ben.id);
  });

  test('a handoff passing: the clock moved past the shift answers the next person, and back again', async () => {
    const id = await daily('Handoffs');
    try {
      assert.deepEqual((await agreed(id, 'Monday noon')).now, [w.ann.id, '2026-03-02T12:00:00.000Z', '2026-03-03T09:00:00.000Z']);
      w.t.clock.set('2026-03-03T08:59:59.999Z');
      assert.equal((await agreed(id, 'the last millisecond of the shift')).now?.[0], w.ann.id);
      w.t.clock.set('2026-03-03T09:00:00.000Z');
      assert.deepEqual((await agreed(id, 'the handoff')).now, [w.ben.id, '2026-03-03T09:00:00.000Z', '2026-03-04T09:00:00.000Z']);
      w.t.clock.set('2026-03-04T10:00:00.000Z');
      assert.equal((await agreed(id, 'the day after')).now?.[0], w.ann.id);
      w.t.clock.set('2026-03-03T10:00:00.000Z');
      assert.equal((await agreed(id, 'the clock set back')).now?.[0], w.ben.id);
    } finally {
      w.t.clock.set('2026-03-02T12:00:00.000Z');
    }
  });

  test('an override added, then ended: seen on the next question each time', async () => {
    const id = await daily('Overrides');
    assert.equal((await agreed(id, 'before')).now?.[0], w.ann.id);
    const o = await w.ok<{ id: number }>(admin, 'POST', `${base}/${id}/overrides`, { user_id: w.admin.id, start: '2026-03-02T12:00:00Z', end: '2026-03-02T14:00:00Z' });
    assert.deepEqual((await agreed(id, 'override added')).now, [w.admin.id, '2026-03-02T12:00:00.000Z', '2026-03-02T14:00:00.000Z']);
    await w.ok(admin, 'DELETE', `${base}/${id}/overrides/${o.id}`);
    assert.equal((await agreed(id, 'override ended')).now?.[0], w.ann.id);
  });

  test('an override starting later changes who is next', async () => {
    const id = await daily('Next');
    assert.equal((await agreed(id, 'before')).next?.[0], w.ben.id);
    await w.ok(admin, 'POST', `${base}/${id}/overrides`, { user_id: w.admin.id, start: '2026-03-02T20:00:00Z', end: '2026-03-02T22:00:00Z' });
    assert.deepEqual((await agreed(id, 'override ahead')).next, [w.admin.id, '2026-03-02T20:00:00.000Z', '2026-03-02T22:00:00.000Z']);
  });

  test('the layers changed: the new ones answer from their moment', async () => {
    const id = await daily('Layers');
    assert.equal((await agreed(id, 'before')).now?.[0], w.ann.id);
    await w.ok(admin, 'PATCH', `${base}/${id}`, { layers: [{ name: 'New days', start: '2026-03-02T09:00', turn: { unit: 'day', length: 1 }, users: [w.ben.id, w.admin.id] }] });
    assert.equal((await agreed(id, 'layers changed')).now?.[0], w.ben.id);
  });

  test('a member who leaves: off the schedule on the next question', async () => {
    const id = await daily('Leavers');
    w.t.clock.set('2026-03-03T15:00:00.000Z'); // Ben's turn
    try {
      assert.equal((await agreed(id, 'before')).now?.[0], w.ben.id);
      await w.ok(w.as(w.owner), 'DELETE', `/v1/orgs/${w.orgSlug}/members/${w.ben.id}`, undefined, 200);
      assert.equal((await agreed(id, 'Ben left')).now, undefined);
    } finally {
      await w.ok(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/members`, { email: w.ben.email, role: 'member' });
      w.t.clock.set('2026-03-02T12:00:00.000Z');
    }
  });
});

describe('on-call memo off (ONCALL_MEMO_SIZE=0)', () => {
  let w: DispatchWorld;
  before(async () => {
    w = await dispatchWorld({ ONCALL_MEMO_SIZE: '0' });
  });
  after(() => w.close());

  test('every question resolves: a row written behind the API is seen at once', async () => {
    const base = `/v1/orgs/${w.orgSlug}/schedules`;
    const start = new Date(w.t.clock.nowMs() - 86_400_000).toISOString().slice(0, 16);
    const { id } = await w.ok<{ id: number }>(w.as(w.admin), 'POST', base, { name: 'Off', time_zone: 'UTC', layers: [{ start, turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] }] });
    const onCall = async () => (await w.ok<OrgView>(w.as(w.ann), 'GET', `/v1/orgs/${w.orgSlug}/on-call`)).schedules.find((x) => x.id === id)!.on_call[0]?.user_id;
    const first = await onCall();
    const other = first === w.ann.id ? w.ben.id : w.ann.id;
    const now = w.t.clock.now().toISOString();
    await w.t.ctx.db.insertInto('oncall_overrides').values({ schedule_id: id, user_id: other, start_time: now, end_time: new Date(w.t.clock.nowMs() + HOUR).toISOString(), created_by: null, created_at: now }).execute();
    assert.equal(await onCall(), other);
  });
});
