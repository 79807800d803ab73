import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AppContext } from '../../context.js';
import { MINUTE } from '../../lib/clock.js';
import { restartedContext, secondInstance, testDialect } from '../../../test/helpers.js';
import { dispatchWorld, signInAgain, type DispatchWorld, type IncidentView, type TimelineView } from '../../../test/world.js';
import { signUp } from '../../../test/factories.js';
import { runPaging, walkDue } from './index.js';

interface Escalation {
  policy_id: number;
  policy_name: string;
  level: number;
  levels: number;
  loop: number;
  repeat: number;
  next_at: string | null;
}
type Walked = IncidentView & { escalation: Escalation | null; assignee_id: number | null; acknowledged_at: string | null; created_at: string };

describe('the escalation walk: levels, delays, repeat, exhausted, skip, acknowledge, once', () => {
  let w: DispatchWorld;
  let primary: number; // Ann on call all day
  let nobody: number; // no layers: nobody is ever on call
  let teamId: number; // Ben and Adam

  before(async () => {
    w = await dispatchWorld();
    // The clock stands at 2026-01-05T12:00Z: Ann's first day-long turn began at 09:00.
    const layer = { start: '2026-01-05T09:00', turn: { unit: 'day', length: 1 }, users: [w.ann.id, w.ben.id] };
    primary = (await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, { name: 'Primary', time_zone: 'UTC', layers: [layer] })).id;
    nobody = (await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, { name: 'Nobody', time_zone: 'UTC', layers: [] })).id;
    await w.ok(w.as(w.owner), 'PATCH', `/v1/users/${w.owner.id}`, { plan: 'agency' }); // teams take a plan that has them (Olga is the instance admin)
    const team = await w.ok<{ id: number; slug: string }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/teams`, { name: 'Mains crew' });
    teamId = team.id;
    for (const u of [w.ben, w.admin]) await w.ok(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/teams/${team.slug}/members`, { user_id: u.id });
    // Email only, at once: each page is one notification, sent by the run its commit wakes.
    for (const u of [w.ann, w.ben, w.admin, w.owner]) await w.ok(w.as(u), 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'email', delay_minutes: 0 }, { channel: 'sms', delay_minutes: 3 }], low: [{ channel: 'email', delay_minutes: 0 }] }, 200);
  });
  after(() => w.close());

  const ctx = () => w.t.ctx;
  const policy = (levels: object[], repeat = 0, name = 'Water mains') =>
    w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/escalation-policies`, { name, repeat, levels });
  const level = (targets: object[], delay = 5) => ({ delay_minutes: delay, targets });
  async function open(policyId: number | null | undefined, fields: object = {}): Promise<Walked> {
    const incident = await w.incident(w.as(w.owner), { title: 'Water main burst', priority: 'urgent', ...(policyId === undefined ? {} : { escalation_policy_id: policyId }), ...fields });
    await ctx().escalation.idle();
    return incident as Walked;
  }
  const get = (id: number) => w.ok<Walked>(w.as(w.owner), 'GET', `/v1/tickets/${id}`);
  const events = async (id: number, ...types: string[]): Promise<TimelineView[]> => (await w.timeline(w.as(w.owner), id)).filter((e) => types.includes(e.type));
  const pagedWho = async (id: number) => (await events(id, 'paged')).map((e) => [e.data.user_id, e.data.level, e.data.loop]);
  /** Moves the clock and runs the sweep as the scheduler would, then waits for the runs it woke. */
  async function at(ms: number) {
    w.t.clock.advance(ms);
    await runPaging(ctx());
    await ctx().escalation.idle();
  }

  test('level 1 pages at once; each level after its delay; the policy again `repeat` times; then escalation_exhausted', async () => {
    const p = await policy([level([{ type: 'user', id: w.ann.id }], 5), level([{ type: 'team', id: teamId }], 10)], 1);
    const incident = await open(p.id);
    const opened = Date.parse(incident.created_at);
    assert.deepEqual(await pagedWho(incident.Id), [[w.ann.id, 1, 0]], 'Ann at once, not after a sweep');
    let now = await get(incident.Id);
    assert.deepEqual(now.escalation, { policy_id: p.id, policy_name: 'Water mains', level: 1, levels: 2, loop: 0, repeat: 1, next_at: new Date(opened + 5 * MINUTE).toISOString() });
    assert.equal(now.assignee_id, w.ann.id, 'the first person paged at level 1 becomes the assignee');
    const notified = await events(incident.Id, 'notified');
    assert.deepEqual(notified.map((e) => [e.data.user_id, e.data.channel, e.data.outcome]), [[w.ann.id, 'email', 'sent']]);

    await at(5 * MINUTE - 1);
    assert.equal((await pagedWho(incident.Id)).length, 1, 'not a millisecond early');
    await at(1);
    // The team's active members: its maker (Olga, the owner), Ben and Adam.
    assert.deepEqual((await pagedWho(incident.Id)).slice(1), [[w.owner.id, 2, 0], [w.ben.id, 2, 0], [w.admin.id, 2, 0]], "the team's active members");
    assert.deepEqual((await events(incident.Id, 'escalated')).map((e) => e.data), [{ level: 2, loop: 0 }]);
    now = await get(incident.Id);
    assert.deepEqual([now.escalation?.level, now.escalation?.loop, now.escalation?.next_at], [2, 0, new Date(opened + 15 * MINUTE).toISOString()]);
    assert.equal(now.assignee_id, w.ann.id, 'escalating does not reassign');

    await at(10 * MINUTE);
    assert.deepEqual((await pagedWho(incident.Id)).slice(4), [[w.ann.id, 1, 1]], 'round two');
    await at(5 * MINUTE);
    assert.deepEqual((await pagedWho(incident.Id)).slice(5), [[w.owner.id, 2, 1], [w.ben.id, 2, 1], [w.admin.id, 2, 1]]);
    assert.equal((await events(incident.Id, 'escalation_exhausted')).length, 0);
    await at(10 * MINUTE);
    assert.equal((await events(incident.Id, 'escalation_exhausted')).length, 1);
    now = await get(incident.Id);
    assert.deepEqual([now.escalation?.level, now.escalation?.loop, now.escalation?.next_at], [2, 1, null]);
    await at(60 * MINUTE);
    assert.equal((await pagedWho(incident.Id)).length, 8, 'nothing after the end');
    assert.equal((await events(incident.Id, 'escalation_exhausted')).length, 1);
  });

  test('a level that resolves to nobody is skipped at once, saying why; a whole round of nobody ends it', async () => {
    const p = await policy([level([{ type: 'schedule', id: nobody }]), level([{ type: 'schedule', id: primary }])]);
    const incident = await open(p.id);
    const skipped = await events(incident.Id, 'escalation_skipped');
    assert.deepEqual(skipped.map((e) => [e.data.level, e.data.loop]), [[1, 0]]);
    assert.match(String(skipped[0]!.data.reason), new RegExp(`nobody is on call in schedule ${nobody}`));
    assert.deepEqual(await pagedWho(incident.Id), [[w.ann.id, 2, 0]], 'level 2 fired at once: Ann is on call');

    const empty = await policy([level([{ type: 'schedule', id: nobody }])], 3);
    const lonely = await open(empty.id);
    assert.equal((await events(lonely.Id, 'escalation_skipped')).length, 1);
    assert.equal((await events(lonely.Id, 'escalation_exhausted')).length, 1, 'no endless walk through empty rounds');
    assert.equal((await get(lonely.Id)).escalation?.next_at, null);
  });

  test('acknowledging stops the walk and every pending notification; the acknowledger, if paged, may and becomes the assignee', async () => {
    const p = await policy([level([{ type: 'user', id: w.ann.id }, { type: 'user', id: w.ben.id }], 5), level([{ type: 'user', id: w.admin.id }])]);
    const incident = await open(p.id);
    assert.equal((await get(incident.Id)).assignee_id, w.ann.id);
    const mine = await w.ok<{ data: { incident_id: number; level: number | null }[] }>(w.as(w.ben), 'GET', '/v1/auth/me/pages');
    assert.deepEqual(mine.data.filter((d) => d.incident_id === incident.Id).map((d) => d.level), [1], "Ben's open page");
    // Ben was paged (not the assignee, not an admin): he may acknowledge, and takes it.
    const acked = await w.ok<Walked>(w.as(w.ben), 'POST', `/v1/tickets/${incident.Id}/acknowledge`, undefined, 200);
    assert.equal(acked.assignee_id, w.ben.id, '"I have it"');
    assert.equal(acked.escalation?.next_at, null);
    const pending = await ctx().db.selectFrom('paging_notifications').select(['user_id', 'channel', 'status', 'reason']).where('incident_id', '=', incident.Id).where('channel', '=', 'sms').execute();
    assert.deepEqual(pending.map((r) => [r.status, r.reason]), [['cancelled', 'acknowledged'], ['cancelled', 'acknowledged']]);
    await at(30 * MINUTE);
    assert.equal((await pagedWho(incident.Id)).length, 2, 'level 2 never fires');
    assert.equal((await w.ok<{ data: { incident_id: number }[] }>(w.as(w.ben), 'GET', '/v1/auth/me/pages')).data.some((d) => d.incident_id === incident.Id), false);
    const assigned = await events(incident.Id, 'assigned');
    assert.deepEqual(assigned.map((e) => [e.data.assignee_id, e.data.by]), [[w.ann.id, 'paging'], [w.ben.id, 'acknowledgement']]);
    // Someone never paged (the owner's colleague Stan is not even in the org; Adam was not paged yet) may not.
    const other = await open(p.id);
    assert.equal((await w.call(w.as(w.stranger), 'POST', `/v1/tickets/${other.Id}/acknowledge`)).statusCode, 404);
    assert.equal((await w.call(w.as(w.ben), 'POST', `/v1/tickets/${other.Id}/acknowledge`)).statusCode, 200, 'paged at level 1');
  });

  test('normal and low incidents page level 1 only, by the low rules', async () => {
    const p = await policy([level([{ type: 'user', id: w.ann.id }]), level([{ type: 'user', id: w.ben.id }])]);
    const incident = await open(p.id, { priority: 'normal' });
    assert.deepEqual(await pagedWho(incident.Id), [[w.ann.id, 1, 0]]);
    assert.equal((await get(incident.Id)).escalation?.next_at, null);
    await at(60 * MINUTE);
    assert.deepEqual(await pagedWho(incident.Id), [[w.ann.id, 1, 0]]);
    // A raise to urgent starts the walk again from level 1, now escalating.
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { priority: 'urgent' }, 200);
    await ctx().escalation.idle();
    assert.deepEqual(await pagedWho(incident.Id), [[w.ann.id, 1, 0], [w.ann.id, 1, 0]]);
    await at(5 * MINUTE);
    assert.deepEqual((await pagedWho(incident.Id)).at(-1), [w.ben.id, 2, 0]);
  });

  test('reassignment and reopening start the walk again from level 1', async () => {
    const p = await policy([level([{ type: 'user', id: w.ann.id }]), level([{ type: 'user', id: w.ben.id }])]);
    const incident = await open(p.id);
    await at(5 * MINUTE);
    assert.equal((await get(incident.Id)).escalation?.level, 2);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { assignee_id: w.admin.id }, 200);
    await ctx().escalation.idle();
    let now = await get(incident.Id);
    assert.deepEqual([now.escalation?.level, now.escalation?.loop, now.assignee_id], [1, 0, w.admin.id]);
    assert.deepEqual((await pagedWho(incident.Id)).at(-1), [w.ann.id, 1, 0]);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { status: 'resolved' }, 200);
    assert.equal((await get(incident.Id)).escalation?.next_at, null);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { status: 'open' }, 200);
    await ctx().escalation.idle();
    now = await get(incident.Id);
    assert.deepEqual([now.escalation?.level, now.acknowledged_at], [1, null]);
    assert.equal((await pagedWho(incident.Id)).length, 4);
  });

  test('POST .../escalate fires the next level now (admin, owner or assignee); 403 for others, 409 without a policy', async () => {
    const p = await policy([level([{ type: 'user', id: w.ann.id }], 30), level([{ type: 'user', id: w.ben.id }], 30)]);
    const incident = await open(p.id);
    assert.equal((await w.call(w.as(w.ben), 'POST', `/v1/tickets/${incident.Id}/escalate`)).statusCode, 403, 'Ben is neither assignee nor admin');
    const up = await w.ok<Walked>(w.as(w.ann), 'POST', `/v1/tickets/${incident.Id}/escalate`, undefined, 200);
    assert.equal(up.escalation?.level, 2);
    assert.equal(Date.parse(up.escalation.next_at!), w.t.clock.now().getTime() + 30 * MINUTE);
    assert.deepEqual((await events(incident.Id, 'escalated')).map((e) => [e.data.level, e.data.by_hand, e.actor?.user_id]), [[2, true, w.ann.id]]);
    const wrapped = await w.ok<Walked>(w.as(w.admin), 'POST', `/v1/incidents/${incident.Id}/escalate`, undefined, 200);
    assert.deepEqual([wrapped.escalation?.level, wrapped.escalation?.loop], [1, 1], 'after the last level, by hand: the policy again');
    const plain = await open(null);
    const res = await w.call(w.as(w.owner), 'POST', `/v1/tickets/${plain.Id}/escalate`);
    assert.equal(res.statusCode, 409, res.body);
  });

  test("the org's default policy: used when an incident names none; null names none; no policy keeps the built-in escalation", async () => {
    const plain = await open(undefined);
    assert.equal(plain.escalation, null, 'no default yet: exactly as before');
    const row = await ctx().db.selectFrom('incidents').select(['escalate_at', 'created_at']).where('id', '=', plain.Id).executeTakeFirstOrThrow();
    assert.equal(Date.parse(row.escalate_at!) - Date.parse(row.created_at), 5 * MINUTE, "the built-in escalation's urgent timeout");
    const p = await policy([level([{ type: 'user', id: w.ben.id }])], 0, 'Default');
    await w.ok(w.as(w.owner), 'PATCH', `/v1/orgs/${w.orgSlug}/dispatch`, { default_escalation_policy_id: p.id }, 200);
    const defaulted = await open(undefined);
    assert.equal(defaulted.escalation?.policy_name, 'Default');
    assert.deepEqual(await pagedWho(defaulted.Id), [[w.ben.id, 1, 0]]);
    const none = await open(null);
    assert.equal(none.escalation, null);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/orgs/${w.orgSlug}/dispatch`, { default_escalation_policy_id: null }, 200);
  });

  test('a later edit of the policy does not change a running walk', async () => {
    const p = await policy([level([{ type: 'user', id: w.ann.id }], 5), level([{ type: 'user', id: w.ben.id }])]);
    const incident = await open(p.id);
    await w.ok(w.as(w.owner), 'PATCH', `/v1/orgs/${w.orgSlug}/escalation-policies/${p.id}`, { levels: [level([{ type: 'user', id: w.admin.id }], 60)] }, 200);
    await at(5 * MINUTE);
    assert.deepEqual((await pagedWho(incident.Id)).at(-1), [w.ben.id, 2, 0]);
  });

  test('someone who leaves the org is not reached for its incidents: their notifications still due are skipped', async () => {
    const cleo = await signUp(w.t.app, { name: 'Cleo Contractor' });
    await w.ok(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/members`, { email: cleo.email, role: 'member' });
    await w.ok(w.as(cleo), 'PUT', '/v1/auth/me/notification-rules', { high: [{ channel: 'email', delay_minutes: 0 }, { channel: 'email', delay_minutes: 3 }], low: [] }, 200);
    const p = await policy([level([{ type: 'user', id: cleo.id }], 30)]);
    const incident = await open(p.id);
    assert.deepEqual((await events(incident.Id, 'notified')).map((e) => e.data.outcome), ['sent']);
    await w.ok(w.as(w.owner), 'DELETE', `/v1/orgs/${w.orgSlug}/members/${cleo.id}`, undefined, 200);
    await at(3 * MINUTE);
    const notified = await events(incident.Id, 'notified');
    assert.deepEqual(notified.map((e) => [e.data.outcome, e.data.reason]), [['sent', undefined], ['skipped', 'no longer a member of the org']]);
    assert.equal((await w.ok<{ data: unknown[] }>(w.as(cleo), 'GET', '/v1/auth/me/pages')).data.length, 0, 'nor does she see the page');
  });

  /** Four incidents on a policy of Ann, then Ben after 5 minutes; the clock moved to their level 2. */
  async function fourDueForLevelTwo(): Promise<Walked[]> {
    const p = await policy([level([{ type: 'user', id: w.ann.id }], 5), level([{ type: 'user', id: w.ben.id }], 10)]);
    const incidents: Walked[] = [];
    for (let k = 0; k < 4; k++) incidents.push(await open(p.id));
    w.t.clock.advance(5 * MINUTE);
    return incidents;
  }
  /** Runs `run` with the context's transactions going through `wrap` (which is given the real one), then puts them back. */
  async function withTransactions<T>(wrap: (real: AppContext['transaction']) => AppContext['transaction'], run: (c: AppContext) => Promise<T>): Promise<T> {
    const c = ctx();
    const original = Object.getOwnPropertyDescriptor(c, 'transaction')!;
    c.transaction = wrap(c.transaction.bind(c));
    try {
      return await run(c);
    } finally {
      Object.defineProperty(c, 'transaction', original);
    }
  }

  test('a run takes the due steps of several incidents at once, each exactly once, each incident\'s notifications in order', async () => {
    const incidents = await fourDueForLevelTwo();
    // The first step's transaction waits until another step's begins (or 5 s, after which it goes on): one after
    // another, as runs went before, no second one begins while the first is open, and `overlapped` stays false.
    let calls = 0;
    let firstOpen = false;
    let overlapped = false;
    let second!: () => void;
    const begun = new Promise<void>((resolve) => (second = resolve));
    const wrap = (real: AppContext['transaction']): AppContext['transaction'] =>
      (async (fn) => {
        calls += 1;
        if (calls === 1) {
          firstOpen = true;
          try {
            await Promise.race([begun, new Promise((resolve) => setTimeout(resolve, 5_000))]);
            return await real(fn);
          } finally {
            firstOpen = false;
          }
        }
        if (firstOpen) {
          overlapped = true;
          second();
        }
        return real(fn);
      });
    // Earlier tests' incidents due by now are walked too.
    assert.ok((await withTransactions(wrap, walkDue)) >= incidents.length);
    await ctx().escalation.idle();
    assert.ok(overlapped, 'a second incident\'s step began while the first one\'s transaction was open');
    for (const i of incidents) {
      assert.deepEqual(await pagedWho(i.Id), [[w.ann.id, 1, 0], [w.ben.id, 2, 0]], `incident ${i.Id}: each level once`);
      // Ann's email at level 1, her SMS 3 minutes later, Ben's email at level 2 (5 minutes): the order they fell due in.
      assert.deepEqual((await events(i.Id, 'notified')).map((e) => [e.data.user_id, e.data.channel]), [[w.ann.id, 'email'], [w.ann.id, 'sms'], [w.ben.id, 'email']]);
    }
    await at(3 * MINUTE);
    for (const i of incidents) {
      assert.deepEqual((await events(i.Id, 'notified')).map((e) => [e.data.user_id, e.data.channel]).slice(3), [[w.ben.id, 'sms']], 'Ben\'s SMS 3 minutes after his page');
    }
  });

  test('a step that fails does not hold up the other incidents: the run throws after the rest, and the step is taken later, once', async () => {
    const incidents = await fourDueForLevelTwo();
    // The run's first step (whichever incident's it is) fails at its transaction, as a lost connection would.
    let calls = 0;
    const wrap = (real: AppContext['transaction']): AppContext['transaction'] =>
      (async (fn) => {
        calls += 1;
        if (calls === 1) throw new Error('injected: the first step failed');
        return real(fn);
      });
    await withTransactions(wrap, (c) => assert.rejects(walkDue(c), /injected: the first step failed/));
    const c = ctx();
    // Before anything runs again: one step (at most one of these four) failed; the other incidents were paged in
    // that run (one after another and stopping at the failure, none of them would be).
    const levelTwo = async () => (await Promise.all(incidents.map((i) => pagedWho(i.Id)))).filter((who) => who.length === 2).length;
    assert.ok((await levelTwo()) >= incidents.length - 1, 'the other incidents were paged in the run that failed');
    // The failed step is still due: a run takes it (the wake of the other pages' commits, or this one).
    await c.escalation.idle();
    await walkDue(c);
    await c.escalation.idle();
    for (const i of incidents) assert.deepEqual(await pagedWho(i.Id), [[w.ann.id, 1, 0], [w.ben.id, 2, 0]], `incident ${i.Id}: each level once`);
  });

  // A schedule target resolves at the instant its level fires, by the zone's rules (the time-zone
  // library's): each case's daily handoff is 03:00 local, the morning of a daylight-saving change, in
  // both hemispheres. Ben has the turn that began the day before, Ann the one from the handoff. The
  // handoff instants were worked out by hand from the zone rules; an offset taken from the day before
  // (a naive reading) would put each an hour off, and level 2 (or 1) would page the wrong person.
  const DST_CASES = [
    { zone: 'America/New_York', dayBefore: '2026-03-07T03:00', handoff: '2026-03-08T07:00:00.000Z', what: 'spring forward (EST to EDT)' },
    { zone: 'Australia/Sydney', dayBefore: '2026-04-04T03:00', handoff: '2026-04-04T17:00:00.000Z', what: 'southern autumn (AEDT to AEST)' },
    { zone: 'Australia/Sydney', dayBefore: '2026-10-03T03:00', handoff: '2026-10-03T16:00:00.000Z', what: 'southern spring (AEST to AEDT)' },
    { zone: 'America/New_York', dayBefore: '2026-10-31T03:00', handoff: '2026-11-01T08:00:00.000Z', what: 'fall back (EDT to EST)' },
  ];
  for (const c of DST_CASES) {
    test(`across ${c.what} in ${c.zone}: each level pages whoever is on call when it fires; delays are exact minutes`, async () => {
      const handoff = Date.parse(c.handoff);
      w.t.clock.set(new Date(handoff - 10 * MINUTE));
      await signInAgain(w);
      const layer = { start: c.dayBefore, turn: { unit: 'day', length: 1 }, users: [w.ben.id, w.ann.id] };
      const schedule = (await w.ok<{ id: number }>(w.as(w.owner), 'POST', `/v1/orgs/${w.orgSlug}/schedules`, { name: `Daily ${c.handoff}`, time_zone: c.zone, layers: [layer] })).id;
      const target = [{ type: 'schedule', id: schedule }];
      const p = await policy([level(target, 15), level(target, 15)]);
      const incident = await open(p.id);
      assert.deepEqual(await pagedWho(incident.Id), [[w.ben.id, 1, 0]], 'ten minutes before the handoff: the turn of the day before');
      assert.equal((await get(incident.Id)).escalation?.next_at, new Date(handoff + 5 * MINUTE).toISOString(), '15 minutes later, whatever the wall clock does');
      await at(15 * MINUTE);
      assert.deepEqual((await pagedWho(incident.Id)).at(-1), [w.ann.id, 2, 0], 'five minutes after the handoff: the new turn');
      await w.ok(w.as(w.owner), 'PATCH', `/v1/tickets/${incident.Id}`, { status: 'resolved' }, 200);
    });
  }

  // SQLite is one instance by design: there the race is between concurrent walkers of one instance;
  // on PostgreSQL between two instances on one schema.
  describe(testDialect === 'postgres' ? 'two instances on one database' : 'concurrent walkers of one instance', () => {
    let other: AppContext;
    let closeOther: () => Promise<void>;
    before(async () => {
      ({ ctx: other, close: closeOther } = await secondInstance(w.t));
    });
    after(() => closeOther());

    test('each level fires exactly once however many walkers run together, and never again after a restart', async () => {
      // Every earlier walk to its end (a late walker fires one level per run, then waits its delay).
      do w.t.clock.advance(60 * MINUTE);
      while ((await runPaging(ctx())) > 0);
      const p = await policy([level([{ type: 'user', id: w.ann.id }], 5), level([{ type: 'user', id: w.ben.id }], 5)], 2);
      const ids: number[] = [];
      for (let i = 0; i < 6; i++) ids.push((await open(p.id, { title: `Race ${i}` })).Id);
      for (let step = 0; step < 6; step++) {
        w.t.clock.advance(5 * MINUTE);
        await Promise.all(Array.from({ length: 6 }, (_, i) => walkDue(i % 2 === 0 ? ctx() : other)));
        // The runs their commits woke (on either instance) race too: wait for them, then count.
        await Promise.all([ctx().escalation.idle(), other.escalation.idle()]);
        const counts = await ctx().db.selectFrom('paging_pages').select(['incident_id', (eb) => eb.fn.countAll<number>().as('n')]).where('incident_id', 'in', ids).groupBy('incident_id').execute();
        assert.deepEqual(counts.map((c) => Number(c.n)), ids.map(() => Math.min(step + 2, 6)), `step ${step}: one more page per incident (the last step exhausts it)`);
      }
      // A fresh instance (a restart) finds nothing to do again.
      const restarted = await restartedContext(w.t);
      try {
        assert.equal(await walkDue(restarted), 0);
      } finally {
        await restarted.close();
      }
      for (const id of ids) {
        const paged = await pagedWho(id);
        assert.deepEqual(paged, [
          [w.ann.id, 1, 0], [w.ben.id, 2, 0], [w.ann.id, 1, 1], [w.ben.id, 2, 1], [w.ann.id, 1, 2], [w.ben.id, 2, 2],
        ]);
        assert.equal((await events(id, 'escalation_exhausted')).length, 1);
      }
    });
  });
});
