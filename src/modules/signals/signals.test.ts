import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MINUTE } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp, type Headers, type Method } from '../../../test/helpers.js';
import { createKey, signUp, type TestUser } from '../../../test/factories.js';
import { browserKeys } from '../../../test/peers.js';
import { sweepSilentBeacons } from './beacons.service.js';

type SignalKind = 'beacon' | 'capture' | 'note' | 'checkin' | 'alert';

interface SignalView {
  Id: number | null;
  type: SignalKind;
  user_id: number;
  user_name: string;
  org_id: number;
  livemode: boolean;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  note: string | null;
  image_url: string | null;
  ticket_id: number | null;
  meta: Record<string, unknown>;
  created_at: string;
}
interface SignalList {
  signals: SignalView[];
  page: number;
  limit: number;
  has_more: boolean;
}
interface BeaconView {
  device_id: string | null;
  device_name: string | null;
  user_id: number;
  user_name: string;
  org_id: number;
  lat: number | null;
  lng: number | null;
  accuracy: number | null;
  meta: Record<string, unknown>;
  created_at: string;
}
interface AuditEntry {
  id: number;
  action: string;
  user_id: number | null;
  org_id: number;
  device_id: string | null;
  created_at: string;
  meta: Record<string, unknown>;
}
interface AuditList {
  entries: AuditEntry[];
  page: number;
  limit: number;
  has_more: boolean;
}
interface ErrorView {
  error: string;
  code: string;
  details?: { field: string; message: string }[];
}

const TYPES: readonly SignalKind[] = ['beacon', 'capture', 'note', 'checkin', 'alert'];
const STORED: readonly SignalKind[] = ['capture', 'note', 'checkin', 'alert'];
const RECORD_KEYS = ['Id', 'accuracy', 'created_at', 'image_url', 'lat', 'livemode', 'lng', 'meta', 'note', 'org_id', 'ticket_id', 'type', 'user_id', 'user_name'];
const AUDIT_KEYS = ['action', 'created_at', 'device_id', 'id', 'meta', 'org_id', 'user_id'];
const FORBIDDEN = { error: 'Forbidden', code: 'forbidden' };

/** Requests and assertions shared by the suites below, bound to one test app. */
function api(getApp: () => TestApp) {
  const req = (headers: Headers, method: Method, url: string, payload?: object) =>
    getApp().app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

  async function post(headers: Headers, payload: Record<string, unknown>): Promise<SignalView> {
    const res = await req(headers, 'POST', '/v1/signals', payload);
    assert.equal(res.statusCode, 201, `${JSON.stringify(payload)}: ${res.body}`);
    return body<SignalView>(res);
  }

  /** A 422 naming `field` first. */
  async function rejects(headers: Headers, payload: Record<string, unknown>, field: string): Promise<void> {
    const res = await req(headers, 'POST', '/v1/signals', payload);
    assert.equal(res.statusCode, 422, `${JSON.stringify(payload).slice(0, 200)}: ${res.body.slice(0, 300)}`);
    const err = body<ErrorView>(res);
    assert.equal(err.code, 'validation_failed');
    assert.equal(err.details?.[0]?.field, field, `${JSON.stringify(payload).slice(0, 200)}: ${res.body.slice(0, 300)}`);
  }

  async function list(headers: Headers, query = ''): Promise<SignalList> {
    const res = await req(headers, 'GET', `/v1/signals${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return body<SignalList>(res);
  }

  async function beacons(headers: Headers): Promise<BeaconView[]> {
    const res = await req(headers, 'GET', '/v1/signals/beacons');
    assert.equal(res.statusCode, 200, res.body);
    const b = body<{ beacons: BeaconView[] }>(res);
    assert.deepEqual(Object.keys(b), ['beacons']);
    return b.beacons;
  }

  async function audit(headers: Headers, orgId: number, query = ''): Promise<AuditEntry[]> {
    const res = await req(headers, 'GET', `/v1/audit?org_id=${orgId}${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return body<AuditList>(res).entries;
  }

  async function stop(headers: Headers, deviceId?: string): Promise<void> {
    const res = await req(headers, 'DELETE', '/v1/signals/beacon', deviceId === undefined ? {} : { device_id: deviceId });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(body(res), { ok: true });
  }

  async function primaryOrg(headers: Headers): Promise<number> {
    const res = await req(headers, 'GET', '/v1/orgs');
    assert.equal(res.statusCode, 200, res.body);
    const org = body<{ orgs: { id: number; primary: boolean }[] }>(res).orgs.find((o) => o.primary);
    assert.ok(org, 'the caller has a primary org');
    return org.id;
  }

  async function addMember(owner: TestUser, slug: string, user: TestUser, role: 'member' | 'admin' = 'member'): Promise<void> {
    const res = await req({ cookie: owner.cookie }, 'POST', `/v1/orgs/${slug}/members`, { email: user.email, role });
    assert.equal(res.statusCode, 201, res.body);
  }

  async function incident(headers: Headers, orgId?: number): Promise<number> {
    const res = await req(headers, 'POST', '/v1/incidents', { title: 'Flooded basement', ...(orgId === undefined ? {} : { org_id: orgId }) });
    assert.equal(res.statusCode, 201, res.body);
    return body<{ Id: number }>(res).Id;
  }

  return { req, post, rejects, list, beacons, audit, stop, primaryOrg, addMember, incident };
}

const as = (u: TestUser): Headers => ({ cookie: u.cookie });
const actions = (entries: AuditEntry[]) => entries.map((e) => [e.action, e.device_id]);

describe('signals', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let member: TestUser;
  let stranger: TestUser;
  let ownerTest: Headers;
  let ownerOrg: number;
  let strangerOrg: number;
  const { req, post, rejects, list, beacons, audit, stop, primaryOrg, addMember, incident } = api(() => t);
  const now = () => t.clock.now().toISOString();
  /** A new user alone in their personal org (owner of it), so counts are not shared with other tests. */
  const solo = (name = 'Solo') => signUp(t.app, { name });

  before(async () => {
    t = await buildTestApp();
    await signUp(t.app, { name: 'Root' }); // the instance admin
    owner = await signUp(t.app, { name: 'Olga Owner' });
    admin = await signUp(t.app, { name: 'Adam Admin' });
    member = await signUp(t.app, { name: 'Mia Member' });
    stranger = await signUp(t.app, { name: 'Sam Stranger' });
    // The owner's personal org takes members: owner, admin and member share it.
    await addMember(owner, owner.slug, admin, 'admin');
    await addMember(owner, owner.slug, member, 'member');
    ownerOrg = await primaryOrg(as(owner));
    strangerOrg = await primaryOrg(as(stranger));
    ownerTest = { 'x-api-key': (await createKey(t.app, owner.cookie, 'test')).key };
  });
  after(() => t.close());

  describe('POST /v1/signals', () => {
    test('answers 201 with the signal record for every type; Id is null only for a beacon', async () => {
      const u = await solo('Rita Recorder');
      const org = await primaryOrg(as(u));
      for (const type of TYPES) {
        const s = await post(as(u), { type, lat: 48.8566, lng: 2.3522, accuracy: 12.5, note: `a ${type}`, meta: { device_id: 'dev-1a2b3c', battery: 0.8 } });
        assert.deepEqual(Object.keys(s).sort(), RECORD_KEYS, type);
        if (type === 'beacon') assert.equal(s.Id, null, 'a beacon is not stored');
        else assert.ok(Number.isSafeInteger(s.Id) && s.Id! > 0, `${type} Id ${s.Id}`);
        assert.deepEqual(s, {
          Id: s.Id,
          type,
          user_id: u.id,
          user_name: 'Rita Recorder',
          org_id: org,
          livemode: true,
          lat: 48.8566,
          lng: 2.3522,
          accuracy: 12.5,
          note: `a ${type}`,
          image_url: null,
          // An alert without ticket_id opens an incident and is linked to it (docs/dispatch.md).
          ticket_id: type === 'alert' ? s.ticket_id : null,
          meta: { device_id: 'dev-1a2b3c', battery: 0.8 },
          created_at: now(),
        });
        if (type === 'alert') assert.ok(Number.isSafeInteger(s.ticket_id) && s.ticket_id! > 0, 'the alert opened an incident');
      }
    });

    test('optional fields default to null and meta to {}; image_url, ticket_id and nested meta are echoed', async () => {
      const bare = await post(as(owner), { type: 'checkin' });
      assert.deepEqual(
        [bare.lat, bare.lng, bare.accuracy, bare.note, bare.image_url, bare.ticket_id, bare.meta, bare.org_id],
        [null, null, null, null, null, null, {}, ownerOrg],
      );
      const ticket = await incident(as(owner));
      const full = await post(as(owner), {
        type: 'capture',
        image_url: 'https://cdn.example.com/p/1.jpg',
        ticket_id: ticket,
        meta: { device_id: 'cam:7', tags: ['smoke', 'roof'], nested: { a: 1 } },
      });
      assert.equal(full.image_url, 'https://cdn.example.com/p/1.jpg');
      assert.equal(full.ticket_id, ticket);
      assert.deepEqual(full.meta, { device_id: 'cam:7', tags: ['smoke', 'roof'], nested: { a: 1 } });
    });

    test('beacons are never stored: the signals table does not grow', async () => {
      const count = async () => Number((await t.ctx.db.selectFrom('signals').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const u = await solo();
      const before = await count();
      for (let i = 0; i < 3; i++) assert.equal((await post(as(u), { type: 'beacon', lat: i, lng: i })).Id, null);
      assert.equal(await count(), before);
      await post(as(u), { type: 'note', note: 'stored' });
      assert.equal(await count(), before + 1);
    });

    test('type is required and one of the five', async () => {
      await rejects(as(owner), {}, 'type');
      await rejects(as(owner), { lat: 1, lng: 1 }, 'type');
      for (const type of ['ping', 'BEACON', '', 'incident', 42, null]) await rejects(as(owner), { type }, 'type');
    });

    test('an alert needs a note, a blank one too', async () => {
      for (const note of [undefined, '', '   ', '\n\t']) await rejects(as(owner), { type: 'alert', ...(note === undefined ? {} : { note }) }, 'note');
      assert.equal((await post(as(owner), { type: 'alert', note: 'Man down at gate 4' })).note, 'Man down at gate 4');
      // Other types do not need one.
      for (const type of ['beacon', 'capture', 'note', 'checkin']) await post(as(owner), { type });
    });

    test('lat, lng and accuracy are bounded; the boundaries themselves are accepted', async () => {
      for (const [payload, field] of [
        [{ lat: 90.0001 }, 'lat'],
        [{ lat: -90.5 }, 'lat'],
        [{ lat: 1000 }, 'lat'],
        [{ lat: '45' }, 'lat'],
        [{ lng: 180.0001 }, 'lng'],
        [{ lng: -180.1 }, 'lng'],
        [{ lng: '2' }, 'lng'],
        [{ accuracy: -0.01 }, 'accuracy'],
        [{ accuracy: -1 }, 'accuracy'],
      ] as const) {
        await rejects(as(owner), { type: 'capture', ...payload }, field);
      }
      for (const [lat, lng] of [
        [-90, -180],
        [90, 180],
        [-90, 180],
        [90, -180],
        [0, 0],
      ] as const) {
        const s = await post(as(owner), { type: 'capture', lat, lng, accuracy: 0 });
        assert.deepEqual([s.lat, s.lng, s.accuracy], [lat, lng, 0]);
      }
      const b = await post(as(owner), { type: 'beacon', lat: -90, lng: 180, accuracy: 0, meta: { device_id: 'bounds' } });
      assert.deepEqual([b.lat, b.lng, b.accuracy], [-90, 180, 0]);
    });

    test('meta must be an object of at most 4096 bytes as JSON (bytes, not characters)', async () => {
      for (const meta of ['x', 42, true, null, [1, 2], ['device_id']]) await rejects(as(owner), { type: 'note', meta }, 'meta');
      // {"pad":"..."} is 10 bytes plus the padding.
      assert.equal((await post(as(owner), { type: 'note', meta: { pad: 'x'.repeat(4086) } })).meta.pad, 'x'.repeat(4086));
      await rejects(as(owner), { type: 'note', meta: { pad: 'x'.repeat(4087) } }, 'meta');
      // 'é' is two bytes in UTF-8: 2043 of them make exactly 4096 bytes, 2044 make 4098 (in 2054 characters).
      await post(as(owner), { type: 'note', meta: { pad: 'é'.repeat(2043) } });
      await rejects(as(owner), { type: 'note', meta: { pad: 'é'.repeat(2044) } }, 'meta');
      await rejects(as(owner), { type: 'beacon', meta: { device_id: 'big', pad: 'x'.repeat(5000) } }, 'meta');
    });

    test('meta.device_id is at most 64 characters of [A-Za-z0-9._:-]', async () => {
      const longest = `${'aZ09._:-'.repeat(8)}`;
      assert.equal(longest.length, 64);
      assert.equal((await post(as(owner), { type: 'beacon', meta: { device_id: longest } })).meta.device_id, longest);
      await stop(as(owner), longest);
      for (const device_id of ['a'.repeat(65), 'has space', 'slash/no', 'é', 'semi;colon', '', 42, null]) {
        await rejects(as(owner), { type: 'beacon', meta: { device_id } }, 'meta.device_id');
      }
      await rejects(as(owner), { type: 'capture', meta: { device_id: 'x'.repeat(65) } }, 'meta.device_id');
    });

    test('recorded_at dates the reading: the past is accepted, more than 60 s in the future is 422', async () => {
      const at = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();
      const past = await post(as(owner), { type: 'capture', recorded_at: at(-3 * 60 * MINUTE) });
      assert.equal(past.created_at, at(-3 * 60 * MINUTE));
      assert.equal((await post(as(owner), { type: 'checkin', recorded_at: at(59_000) })).created_at, at(59_000));
      assert.equal((await post(as(owner), { type: 'checkin', recorded_at: at(60_000) })).created_at, at(60_000), 'exactly 60 s ahead is accepted');
      await rejects(as(owner), { type: 'checkin', recorded_at: at(60_001) }, 'recorded_at');
      await rejects(as(owner), { type: 'checkin', recorded_at: at(61_000) }, 'recorded_at');
      await rejects(as(owner), { type: 'beacon', meta: { device_id: 'future' }, recorded_at: at(10 * MINUTE) }, 'recorded_at');
      for (const recorded_at of ['yesterday', '2026-13-01T00:00:00Z', 1767614400000]) await rejects(as(owner), { type: 'note', recorded_at }, 'recorded_at');
    });

    test("org_id: the caller's primary org by default, any org of theirs, else 403 (a nonexistent one too)", async () => {
      assert.equal((await post(as(member), { type: 'note' })).org_id, await primaryOrg(as(member)));
      assert.equal((await post(as(member), { type: 'note', org_id: ownerOrg })).org_id, ownerOrg);
      for (const org_id of [strangerOrg, 999_999]) {
        for (const type of TYPES) {
          const res = await req(as(owner), 'POST', '/v1/signals', { type, org_id, note: 'x', meta: { device_id: 'org-check' } });
          assert.equal(res.statusCode, 403, `${type} into org ${org_id}: ${res.body}`);
          assert.deepEqual(body(res), FORBIDDEN);
        }
      }
      assert.equal((await beacons(as(stranger))).length, 0, 'the refused beacon did not land anywhere');
    });

    test('ticket_id must be an incident of the same org and mode', async () => {
      const live = await incident(as(owner));
      const testMode = await incident(ownerTest);
      const strangers = await incident(as(stranger));
      const memberOwn = await incident(as(member));

      assert.equal((await post(as(owner), { type: 'capture', ticket_id: live })).ticket_id, live);
      assert.equal((await post(ownerTest, { type: 'note', ticket_id: testMode })).ticket_id, testMode);
      assert.equal((await post(as(member), { type: 'note', org_id: ownerOrg, ticket_id: live })).ticket_id, live, 'any member of the org may link it');

      await rejects(as(owner), { type: 'capture', ticket_id: 999_999 }, 'ticket_id');
      await rejects(as(owner), { type: 'capture', ticket_id: strangers }, 'ticket_id');
      await rejects(as(owner), { type: 'capture', ticket_id: testMode }, 'ticket_id');
      await rejects(ownerTest, { type: 'capture', ticket_id: live }, 'ticket_id');
      // The member belongs to both orgs, but the incident must be of the org the signal goes into.
      await rejects(as(member), { type: 'note', ticket_id: live }, 'ticket_id');
      await rejects(as(member), { type: 'note', org_id: ownerOrg, ticket_id: memberOwn }, 'ticket_id');
      for (const ticket_id of [0, -1, 'abc', 1.5]) await rejects(as(owner), { type: 'note', ticket_id }, 'ticket_id');
    });
  });

  describe('alerts', () => {
    interface OutboxView {
      kind: string;
      topic: string;
      recipient: string;
      status: string;
      livemode: number;
      org_id: number | null;
      user_id: number | null;
      payload: string;
    }
    /** The alert deliveries queued by `post` (pushes carry the signal id; emails do not, so: the rows it added). */
    const alertRows = async (post: () => Promise<SignalView>): Promise<{ signal: SignalView; rows: OutboxView[] }> => {
      const before = await t.ctx.db.selectFrom('outbox').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow();
      const signal = await post();
      const rows = await t.ctx.db.selectFrom('outbox').selectAll().where('topic', '=', 'signal.alert').where('id', '>', Number(before.id ?? 0)).orderBy('id').execute();
      return { signal, rows };
    };

    const reach = async (headers: Headers, orgId?: number) => {
      const res = await req(headers, 'GET', `/v1/signals/alert-reach${orgId ? `?org_id=${orgId}` : ''}`);
      assert.equal(res.statusCode, 200, res.body);
      return body<{ org_id: number; org_name: string; livemode: boolean; members: number; by_push: number; by_email: number; you: string }>(res);
    };
    const subscribe = async (u: TestUser) => {
      const res = await req(as(u), 'POST', '/v1/push/subscriptions', { endpoint: `https://push.example.com/send/${u.id}`, keys: browserKeys().json });
      assert.equal(res.statusCode, 201, res.body);
    };

    test('every member of the target org is told: by push when they turned notifications on, else by email; the preview says so', async () => {
      const boss = await solo('Boss');
      const org = await primaryOrg(as(boss));
      assert.deepEqual(await reach(as(boss)), { org_id: org, org_name: 'Boss', livemode: true, members: 1, by_push: 0, by_email: 1, you: 'email' });
      const { signal: alone, rows: first } = await alertRows(() => post(as(boss), { type: 'alert', note: 'first\nmore words' }));
      assert.deepEqual(
        first.map((r) => [r.kind, r.topic, r.recipient, r.status, r.org_id, r.user_id]),
        [['email', 'signal.alert', boss.email, 'pending', org, boss.id]],
      );
      const mail = JSON.parse(first[0]!.payload) as { subject: string; text: string; reply_to?: string };
      assert.equal(mail.subject, 'Alert from Boss (Boss): first');
      assert.match(mail.text, /^Boss sent an alert to Boss:\n\nfirst\nmore words\n/);
      assert.ok(mail.text.includes(`http://muster.test/app/incidents/${alone.ticket_id}`), mail.text);
      assert.match(mail.text, /notifications are not turned on/);

      const a = await solo('Crew A');
      const b = await solo('Crew B');
      await addMember(boss, boss.slug, a);
      await addMember(boss, boss.slug, b, 'admin');
      await subscribe(a);
      assert.deepEqual(await reach(as(a), org), { org_id: org, org_name: 'Boss', livemode: true, members: 3, by_push: 1, by_email: 2, you: 'push' });
      const { rows } = await alertRows(() => post(as(a), { type: 'alert', note: 'second', org_id: org }));
      assert.equal(rows.length, 3);
      assert.ok(rows.every((r) => r.topic === 'signal.alert' && r.status === 'pending' && r.livemode === 1 && r.org_id === org));
      assert.deepEqual(
        rows.map((r) => [r.user_id, r.kind, r.recipient]).sort((x, y) => Number(x[0]) - Number(y[0])),
        [
          [boss.id, 'email', boss.email],
          [a.id, 'push', `user:${a.id}`],
          [b.id, 'email', b.email],
        ],
      );
      // A member not in the org, or an org the caller is not in: no preview.
      assert.equal((await req(as(await solo('Out')), 'GET', `/v1/signals/alert-reach?org_id=${org}`)).statusCode, 403);
    });

    test('only the target org is alerted: members of the sender’s other orgs are not', async () => {
      // The member belongs to the owner's org (3 members) and to their own personal org (1).
      const own = await alertRows(() => post(as(member), { type: 'alert', note: 'own org' }));
      assert.deepEqual(own.rows.map((r) => r.user_id), [member.id]);
      const shared = await alertRows(() => post(as(member), { type: 'alert', note: 'shared org', org_id: ownerOrg }));
      assert.deepEqual(shared.rows.map((r) => r.user_id).sort(), [owner.id, admin.id, member.id].sort());
    });

    test('in test mode the deliveries are recorded as suppressed, and the preview says test mode', async () => {
      const { signal: s, rows } = await alertRows(() => post(ownerTest, { type: 'alert', note: 'drill' }));
      assert.equal(s.livemode, false);
      assert.equal(rows.length, 3);
      assert.deepEqual([...new Set(rows.map((r) => `${r.status}/${r.livemode}`))], ['suppressed/0']);
      assert.equal((await reach(ownerTest)).livemode, false);
    });

    test('other types queue nothing', async () => {
      const u = await solo();
      const before = await t.ctx.db.selectFrom('outbox').select((eb) => eb.fn.max('id').as('id')).executeTakeFirstOrThrow();
      for (const type of ['beacon', 'capture', 'note', 'checkin']) await post(as(u), { type, note: 'x' });
      const after = await t.ctx.db.selectFrom('outbox').selectAll().where('id', '>', Number(before.id ?? 0)).where('topic', 'like', 'signal%').execute();
      assert.deepEqual(after, []);
    });
  });

  describe('GET /v1/signals', () => {
    let lister: TestUser;
    let made: SignalView[];
    before(async () => {
      lister = await solo('Lee Lister');
      made = [];
      for (const [type, note] of [
        ['capture', 'c1'],
        ['note', 'n1'],
        ['checkin', 'k1'],
        ['alert', 'a1'],
        ['note', 'n2'],
      ] as const) {
        made.push(await post(as(lister), { type, note }));
        await post(as(lister), { type: 'beacon', lat: 1, lng: 1 }); // never listed
      }
    });

    test('lists stored signals newest first with {signals, page, limit, has_more}; never beacons', async () => {
      const res = await list(as(lister));
      assert.deepEqual(Object.keys(res).sort(), ['has_more', 'limit', 'page', 'signals']);
      assert.deepEqual([res.page, res.limit, res.has_more], [1, 50, false]);
      assert.deepEqual(res.signals.map((s) => s.note), ['n2', 'a1', 'k1', 'n1', 'c1']);
      assert.deepEqual(res.signals, [...made].reverse(), 'each item is the record POST answered');
      assert.ok(res.signals.every((s) => s.type !== 'beacon' && s.Id !== null));
    });

    test('filters by a stored type; type=beacon is an empty list (never stored); unknown types are 422', async () => {
      assert.deepEqual((await list(as(lister), '?type=note')).signals.map((s) => s.note), ['n2', 'n1']);
      for (const type of STORED) {
        const got = (await list(as(lister), `?type=${type}`)).signals;
        assert.ok(got.length > 0 && got.every((s) => s.type === type), type);
      }
      assert.deepEqual((await list(as(lister), '?type=beacon')).signals, []);
      for (const type of ['ping', 'NOTE']) {
        const res = await req(as(lister), 'GET', `/v1/signals?type=${type}`);
        assert.equal(res.statusCode, 422, type);
        assert.equal(body<ErrorView>(res).details?.[0]?.field, 'type');
      }
    });

    test('limit is 1..200 and page from 1; outside is 422', async () => {
      for (const [q, field] of [
        ['limit=0', 'limit'],
        ['limit=201', 'limit'],
        ['limit=-5', 'limit'],
        ['limit=x', 'limit'],
        ['page=0', 'page'],
        ['page=-1', 'page'],
        ['page=x', 'page'],
      ] as const) {
        const res = await req(as(lister), 'GET', `/v1/signals?${q}`);
        assert.equal(res.statusCode, 422, q);
        assert.equal(body<ErrorView>(res).details?.[0]?.field, field, q);
      }
      assert.equal((await list(as(lister), '?limit=1')).signals.length, 1);
      assert.equal((await list(as(lister), '?limit=200')).limit, 200);
    });

    test('pages with has_more at the edges', async () => {
      const page = async (limit: number, n: number) => {
        const r = await list(as(lister), `?limit=${limit}&page=${n}`);
        assert.deepEqual([r.limit, r.page], [limit, n]);
        return [r.signals.map((s) => s.note).join(','), r.has_more];
      };
      assert.deepEqual(await page(2, 1), ['n2,a1', true]);
      assert.deepEqual(await page(2, 2), ['k1,n1', true]);
      assert.deepEqual(await page(2, 3), ['c1', false]);
      assert.deepEqual(await page(2, 4), ['', false]);
      assert.deepEqual(await page(5, 1), ['n2,a1,k1,n1,c1', false], 'a page exactly full has no more');
      assert.deepEqual(await page(4, 1), ['n2,a1,k1,n1', true], 'one left over');
      assert.deepEqual(await page(4, 2), ['c1', false]);
      assert.deepEqual(await page(1, 5), ['c1', false]);
      assert.deepEqual(await page(1, 4), ['n1', true]);
    });

    test("covers every org of the caller, including other members' signals; org_id narrows to one", async () => {
      const u = await solo('Two Orgs');
      const uOrg = await primaryOrg(as(u));
      const boss = await solo('Team Boss');
      const bossOrg = await primaryOrg(as(boss));
      await addMember(boss, boss.slug, u);
      const mine = await post(as(u), { type: 'note', note: 'in my org' });
      const theirs = await post(as(boss), { type: 'note', note: 'by the boss' });
      const mineThere = await post(as(u), { type: 'checkin', org_id: bossOrg });

      assert.deepEqual((await list(as(u))).signals.map((s) => s.Id), [mineThere.Id, theirs.Id, mine.Id]);
      assert.deepEqual((await list(as(u), `?org_id=${uOrg}`)).signals.map((s) => s.Id), [mine.Id]);
      assert.deepEqual((await list(as(u), `?org_id=${bossOrg}`)).signals.map((s) => s.Id), [mineThere.Id, theirs.Id]);
      assert.deepEqual((await list(as(u), `?org_id=${bossOrg}&type=checkin`)).signals.map((s) => s.Id), [mineThere.Id]);
      assert.deepEqual((await list(as(boss))).signals.map((s) => s.Id), [mineThere.Id, theirs.Id], "the boss does not see u's own org");

      for (const org of [strangerOrg, 999_999]) {
        const res = await req(as(u), 'GET', `/v1/signals?org_id=${org}`);
        assert.equal(res.statusCode, 403, `org ${org}`);
        assert.deepEqual(body(res), FORBIDDEN);
      }
    });
  });

  describe('beacon lifecycle', () => {
    test('the first beacon writes beacon_on; a run of beacons writes just one', async () => {
      const u = await solo('Bea Con');
      const org = await primaryOrg(as(u));
      await post(as(u), { type: 'beacon', lat: 10, lng: 20, accuracy: 5 });
      const entries = await audit(as(u), org);
      assert.equal(entries.length, 1);
      assert.deepEqual(Object.keys(entries[0]!).sort(), AUDIT_KEYS);
      const { id, ...rest } = entries[0]!;
      assert.ok(Number.isSafeInteger(id) && id > 0);
      assert.deepEqual(rest.action, 'beacon_on');
      assert.deepEqual([rest.user_id, rest.org_id, rest.device_id, rest.created_at], [u.id, org, null, now()]);

      for (let i = 0; i < 4; i++) await post(as(u), { type: 'beacon', lat: 10 + i, lng: 20 });
      assert.deepEqual(actions(await audit(as(u), org)), [['beacon_on', null]]);
    });

    test('DELETE answers {ok:true}, writes beacon_off once; the next beacon writes a new beacon_on', async () => {
      const u = await solo();
      const org = await primaryOrg(as(u));
      await post(as(u), { type: 'beacon', lat: 1, lng: 2 });
      await post(as(u), { type: 'beacon', lat: 1, lng: 2 });
      await stop(as(u));
      const afterStop = await audit(as(u), org);
      assert.deepEqual(actions(afterStop), [
        ['beacon_off', null],
        ['beacon_on', null],
      ]);
      assert.deepEqual([afterStop[0]!.user_id, afterStop[0]!.org_id], [u.id, org]);
      assert.ok(afterStop[0]!.id > afterStop[1]!.id, 'newest first');
      assert.deepEqual(await beacons(as(u)), [], 'an off device leaves the map');

      await stop(as(u));
      assert.equal((await audit(as(u), org)).length, 2, 'stopping again writes nothing');

      await post(as(u), { type: 'beacon', lat: 3, lng: 4 });
      await post(as(u), { type: 'beacon', lat: 3, lng: 4 });
      assert.deepEqual(actions(await audit(as(u), org)), [
        ['beacon_on', null],
        ['beacon_off', null],
        ['beacon_on', null],
      ]);
      assert.deepEqual((await beacons(as(u))).map((b) => [b.lat, b.lng]), [[3, 4]]);
    });

    test('DELETE for a device that is not beaconing answers {ok:true} and writes nothing', async () => {
      const u = await solo();
      const org = await primaryOrg(as(u));
      await stop(as(u));
      await stop(as(u), 'never-seen');
      assert.deepEqual(await audit(as(u), org), []);
      await post(as(u), { type: 'beacon', meta: { device_id: 'phone-1' } });
      await stop(as(u), 'phone-2');
      await stop(as(u)); // the user-keyed device is another device
      assert.deepEqual(actions(await audit(as(u), org)), [['beacon_on', 'phone-1']]);
      // Another user cannot switch this user's device off by naming it.
      await stop(as(owner), 'phone-1');
      assert.deepEqual(actions(await audit(as(u), org)), [['beacon_on', 'phone-1']]);
      assert.equal((await beacons(as(u))).length, 1);
    });

    test('two devices of one user are independent', async () => {
      const u = await solo('Multi Device');
      const org = await primaryOrg(as(u));
      await post(as(u), { type: 'beacon', lat: 1, lng: 1, meta: { device_id: 'phone-1' } });
      await post(as(u), { type: 'beacon', lat: 2, lng: 2, meta: { device_id: 'tablet:2' } });
      await post(as(u), { type: 'beacon', lat: 1.5, lng: 1.5, meta: { device_id: 'phone-1' } });
      assert.deepEqual(actions(await audit(as(u), org)), [
        ['beacon_on', 'tablet:2'],
        ['beacon_on', 'phone-1'],
      ]);
      const both = await beacons(as(u));
      assert.deepEqual(both.map((b) => [b.device_id, b.lat]).sort(), [
        ['phone-1', 1.5],
        ['tablet:2', 2],
      ]);

      await stop(as(u), 'phone-1');
      assert.deepEqual(actions(await audit(as(u), org)), [
        ['beacon_off', 'phone-1'],
        ['beacon_on', 'tablet:2'],
        ['beacon_on', 'phone-1'],
      ]);
      assert.deepEqual((await beacons(as(u))).map((b) => b.device_id), ['tablet:2']);
      await post(as(u), { type: 'beacon', lat: 2.5, lng: 2, meta: { device_id: 'tablet:2' } });
      assert.equal((await audit(as(u), org)).length, 3, 'the tablet was still on');
      await post(as(u), { type: 'beacon', lat: 1, lng: 1, meta: { device_id: 'phone-1' } });
      assert.deepEqual(actions(await audit(as(u), org))[0], ['beacon_on', 'phone-1']);
      assert.equal((await beacons(as(u))).length, 2);
    });
  });

  describe('GET /v1/signals/beacons', () => {
    test('the last known position of every active device of the caller’s orgs', async () => {
      const boss = await solo('Map Boss');
      const crew = await solo('Map Crew');
      const bossOrg = await primaryOrg(as(boss));
      const crewOrg = await primaryOrg(as(crew));
      await addMember(boss, boss.slug, crew);
      await post(as(boss), { type: 'beacon', lat: 10, lng: 10, accuracy: 3, meta: { device_id: 'boss-phone', speed: 2 } });
      await post(as(boss), { type: 'beacon', lat: 11, lng: 12, accuracy: 4, meta: { device_id: 'boss-phone', speed: 3 } });
      await post(as(crew), { type: 'beacon', lat: 20, lng: 20, org_id: bossOrg });
      await post(as(crew), { type: 'beacon', lat: 30, lng: 30, meta: { device_id: 'crew-own' } });

      const bossView = await beacons(as(boss));
      const bossPhone = bossView.find((b) => b.device_id === 'boss-phone');
      assert.deepEqual(bossPhone && { ...bossPhone, last_seen_at: undefined }, {
        device_id: 'boss-phone',
        device_name: null,
        user_id: boss.id,
        user_name: 'Map Boss',
        org_id: bossOrg,
        lat: 11,
        lng: 12,
        accuracy: 4,
        meta: { device_id: 'boss-phone', speed: 3 },
        created_at: now(),
        last_seen_at: undefined,
      });
      assert.deepEqual(bossView.map((b) => [b.user_id, b.device_id, b.org_id, b.lat]).sort(), [
        [boss.id, 'boss-phone', bossOrg, 11],
        [crew.id, null, bossOrg, 20],
      ].sort(), "the boss sees the org's devices, not the crew's own org");
      assert.deepEqual(
        (await beacons(as(crew))).map((b) => [b.user_id, b.device_id, b.org_id]).sort(),
        [
          [boss.id, 'boss-phone', bossOrg],
          [crew.id, null, bossOrg],
          [crew.id, 'crew-own', crewOrg],
        ].sort(),
      );
      assert.ok(!(await beacons(as(stranger))).some((b) => b.org_id === bossOrg || b.org_id === crewOrg), 'a stranger sees none of them');
    });

    test("a registered tracker device's beacon carries the device's name; others, and a revoked device's, carry null", async () => {
      const u = await solo('Name Owner');
      const other = await solo('Name Other');
      await addMember(u, u.slug, other);
      const org = await primaryOrg(as(u));
      const created = await req(as(u), 'POST', '/v1/devices', { name: 'Van 7' });
      assert.equal(created.statusCode, 201, created.body);
      const dev = body<{ id: number; device_id: string }>(created);
      await post(as(u), { type: 'beacon', lat: 1, lng: 1, meta: { device_id: dev.device_id } });
      await post(as(u), { type: 'beacon', lat: 2, lng: 2, meta: { device_id: 'dev-aaaaaa-aaaaaaaa' } });
      // Another user sending the same device_id is not that device.
      await post(as(other), { type: 'beacon', lat: 3, lng: 3, org_id: org, meta: { device_id: dev.device_id } });
      const named = async (who: TestUser) =>
        (await beacons(as(who))).filter((b) => b.org_id === org).map((b) => [b.user_id, b.device_id, b.device_name]).sort();
      const expected = [
        [u.id, dev.device_id, 'Van 7'],
        [u.id, 'dev-aaaaaa-aaaaaaaa', null],
        [other.id, dev.device_id, null],
      ].sort();
      assert.deepEqual(await named(u), expected);
      assert.deepEqual(await named(other), expected, 'every member of the org sees the name on the map');
      assert.equal((await req(as(u), 'DELETE', `/v1/devices/${dev.id}`)).statusCode, 200);
      // Revoking switches the device's beacon off; a beacon sent with that id afterwards is unnamed.
      await post(as(u), { type: 'beacon', lat: 4, lng: 4, meta: { device_id: dev.device_id } });
      assert.deepEqual((await named(u)).filter((r) => r[0] === u.id && r[1] === dev.device_id), [[u.id, dev.device_id, null]]);
    });

    test('a beacon older than the stored position does not move it, yet answers 201', async () => {
      const u = await solo();
      const at = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();
      await post(as(u), { type: 'beacon', lat: 1, lng: 1, recorded_at: at(-MINUTE) });
      const stale = await post(as(u), { type: 'beacon', lat: 2, lng: 2, recorded_at: at(-2 * MINUTE) });
      assert.deepEqual([stale.Id, stale.lat, stale.created_at], [null, 2, at(-2 * MINUTE)]);
      assert.deepEqual((await beacons(as(u))).map((b) => [b.lat, b.created_at]), [[1, at(-MINUTE)]], 'the newer position stays');
      await post(as(u), { type: 'beacon', lat: 3, lng: 3, recorded_at: at(-30_000) });
      assert.deepEqual((await beacons(as(u))).map((b) => [b.lat, b.created_at]), [[3, at(-30_000)]], 'a newer one moves it');
      await post(as(u), { type: 'beacon', lat: 4, lng: 4 });
      assert.deepEqual((await beacons(as(u))).map((b) => [b.lat, b.created_at]), [[4, now()]]);
    });
  });

  describe('GET /v1/audit', () => {
    test('is for org admins and owners; a plain member is 403, a non-member 404, no org_id 422', async () => {
      await post(as(member), { type: 'beacon', org_id: ownerOrg, meta: { device_id: 'audit-dev' } });
      for (const u of [owner, admin]) {
        const entries = await audit(as(u), ownerOrg);
        assert.ok(entries.some((e) => e.action === 'beacon_on' && e.device_id === 'audit-dev' && e.user_id === member.id && e.org_id === ownerOrg));
      }
      const asMember = await req(as(member), 'GET', `/v1/audit?org_id=${ownerOrg}`);
      assert.equal(asMember.statusCode, 403);
      assert.deepEqual(body(asMember), FORBIDDEN);
      for (const org of [ownerOrg, 999_999]) {
        const res = await req(as(stranger), 'GET', `/v1/audit?org_id=${org}`);
        assert.equal(res.statusCode, 404, `org ${org}`);
        assert.deepEqual(body(res), { error: 'Not found', code: 'not_found' });
      }
      const missing = await req(as(owner), 'GET', '/v1/audit');
      assert.equal(missing.statusCode, 422);
      assert.equal(body<ErrorView>(missing).details?.[0]?.field, 'org_id');
      for (const q of ['org_id=x', 'org_id=0']) assert.equal((await req(as(owner), 'GET', `/v1/audit?${q}`)).statusCode, 422, q);
      // The member is owner of their own org and reads its log.
      assert.equal((await req(as(member), 'GET', `/v1/audit?org_id=${await primaryOrg(as(member))}`)).statusCode, 200);
    });

    test('newest first, paged with has_more, the org only', async () => {
      const u = await solo();
      const org = await primaryOrg(as(u));
      for (const d of ['d1', 'd2', 'd3']) await post(as(u), { type: 'beacon', meta: { device_id: d } });
      await stop(as(u), 'd1');
      const all = await audit(as(u), org);
      assert.deepEqual(actions(all), [
        ['beacon_off', 'd1'],
        ['beacon_on', 'd3'],
        ['beacon_on', 'd2'],
        ['beacon_on', 'd1'],
      ]);
      assert.deepEqual([...all].sort((a, b) => b.id - a.id), all);
      assert.ok(all.every((e) => e.org_id === org));
      const res = await req(as(u), 'GET', `/v1/audit?org_id=${org}&limit=3`);
      const paged = body<AuditList>(res);
      assert.deepEqual([paged.entries.length, paged.page, paged.limit, paged.has_more], [3, 1, 3, true]);
      const last = body<AuditList>(await req(as(u), 'GET', `/v1/audit?org_id=${org}&limit=3&page=2`));
      assert.deepEqual([actions(last.entries), last.has_more], [[['beacon_on', 'd1']], false]);
      assert.equal((await req(as(u), 'GET', `/v1/audit?org_id=${org}&limit=201`)).statusCode, 422);
    });
  });

  describe('isolation', () => {
    test("a user of another org never sees the org's signals, beacons or audit entries", async () => {
      const s = await post(as(owner), { type: 'note', note: 'owner secret' });
      await post(as(owner), { type: 'beacon', lat: 5, lng: 5, meta: { device_id: 'owner-secret' } });
      const strangerSignals = (await list(as(stranger))).signals;
      assert.ok(!strangerSignals.some((x) => x.Id === s.Id || x.org_id === ownerOrg));
      assert.ok(!(await beacons(as(stranger))).some((b) => b.org_id === ownerOrg));
      assert.equal((await req(as(stranger), 'GET', `/v1/audit?org_id=${ownerOrg}`)).statusCode, 404);
      assert.equal((await req(as(stranger), 'GET', `/v1/signals?org_id=${ownerOrg}`)).statusCode, 403);
      // A member of the org does see them.
      assert.ok((await list(as(member))).signals.some((x) => x.Id === s.Id));
      assert.ok((await beacons(as(member))).some((b) => b.device_id === 'owner-secret'));
    });

    test('an sk_test_ key sees only test-mode signals, beacons and audit; live credentials never see test ones', async () => {
      const u = await solo('Mode User');
      const org = await primaryOrg(as(u));
      const testKey = { 'x-api-key': (await createKey(t.app, u.cookie, 'test')).key };
      const liveKey = { 'x-api-key': (await createKey(t.app, u.cookie, 'live')).key };

      const live = await post(as(u), { type: 'note', note: 'live note' });
      const tst = await post(testKey, { type: 'note', note: 'test note' });
      assert.deepEqual([live.livemode, tst.livemode], [true, false]);
      const tstBeacon = await post(testKey, { type: 'beacon', lat: 1, lng: 1, meta: { device_id: 'test-dev' } });
      assert.equal(tstBeacon.livemode, false);
      await post(liveKey, { type: 'beacon', lat: 2, lng: 2, meta: { device_id: 'live-dev' } });

      assert.deepEqual((await list(testKey)).signals.map((x) => x.Id), [tst.Id]);
      for (const h of [as(u), liveKey]) {
        assert.deepEqual((await list(h)).signals.map((x) => x.Id), [live.Id]);
        assert.deepEqual((await beacons(h)).map((b) => b.device_id), ['live-dev']);
        assert.deepEqual(actions(await audit(h, org)), [['beacon_on', 'live-dev']]);
      }
      assert.deepEqual((await beacons(testKey)).map((b) => b.device_id), ['test-dev']);
      assert.deepEqual(actions(await audit(testKey, org)), [['beacon_on', 'test-dev']]);

      // Turning a device off is per mode too: the same device id in the other mode is another device.
      await post(as(u), { type: 'beacon', meta: { device_id: 'test-dev' } });
      await stop(testKey, 'test-dev');
      assert.deepEqual((await beacons(as(u))).map((b) => b.device_id).sort(), ['live-dev', 'test-dev']);
      assert.deepEqual(await beacons(testKey), []);
      assert.deepEqual(actions(await audit(testKey, org)), [
        ['beacon_off', 'test-dev'],
        ['beacon_on', 'test-dev'],
      ]);
      assert.deepEqual(actions(await audit(as(u), org)), [
        ['beacon_on', 'test-dev'],
        ['beacon_on', 'live-dev'],
      ]);
    });

    test('every route answers 401 without credentials', async () => {
      for (const [method, url, payload] of [
        ['POST', '/v1/signals', { type: 'note' }],
        ['POST', '/v1/signals', undefined],
        ['GET', '/v1/signals', undefined],
        ['GET', '/v1/signals/beacons', undefined],
        ['DELETE', '/v1/signals/beacon', {}],
        ['DELETE', '/v1/signals/beacon', undefined],
        ['GET', '/v1/signals/stream', undefined],
        ['GET', `/v1/audit?org_id=${ownerOrg}`, undefined],
        ['GET', '/v1/audit', undefined],
      ] as const) {
        for (const headers of [{}, { cookie: 'muster_session=nope' }, { 'x-api-key': `sk_test_${'A'.repeat(43)}` }] as Headers[]) {
          const res = await req(headers, method, url, payload);
          assert.equal(res.statusCode, 401, `${method} ${url} ${JSON.stringify(headers)}`);
          assert.deepEqual(body(res), { error: 'Unauthorized', code: 'unauthorized' });
        }
      }
    });
  });
});

describe('silent beacons', () => {
  let t: TestApp;
  let u: TestUser;
  let org: number;
  const { post, beacons, audit } = api(() => t);

  before(async () => {
    t = await buildTestApp();
    u = await signUp(t.app, { name: 'Quiet' });
    org = await primaryOrg();
  });
  after(() => t.close());

  async function primaryOrg(): Promise<number> {
    const res = await t.app.inject({ url: '/v1/orgs', headers: as(u) });
    return body<{ orgs: { id: number; primary: boolean }[] }>(res).orgs.find((o) => o.primary)!.id;
  }

  test('the timeout is BEACON_TIMEOUT_MS, 5 minutes by default', () => {
    assert.equal(t.ctx.config.beaconTimeoutMs, 300_000);
  });

  test('a device silent just under 5 minutes stays on; over 5 minutes it is switched off once, with reason silence', async () => {
    await post(as(u), { type: 'beacon', lat: 1, lng: 1, meta: { device_id: 'quiet-1' } });
    t.clock.advance(5 * MINUTE - 1);
    assert.equal(await sweepSilentBeacons(t.ctx), 0);
    assert.deepEqual((await beacons(as(u))).map((b) => b.device_id), ['quiet-1']);
    assert.deepEqual(actions(await audit(as(u), org)), [['beacon_on', 'quiet-1']]);

    t.clock.advance(2);
    assert.equal(await sweepSilentBeacons(t.ctx), 1);
    const entries = await audit(as(u), org);
    assert.deepEqual(actions(entries), [
      ['beacon_off', 'quiet-1'],
      ['beacon_on', 'quiet-1'],
    ]);
    assert.deepEqual(entries[0]!.meta, { reason: 'silence' });
    assert.deepEqual([entries[0]!.user_id, entries[0]!.org_id, entries[0]!.created_at], [u.id, org, t.clock.now().toISOString()]);
    assert.deepEqual(await beacons(as(u)), [], 'it left the map');

    assert.equal(await sweepSilentBeacons(t.ctx), 0, 'a second sweep finds nothing');
    t.clock.advance(10 * MINUTE);
    assert.equal(await sweepSilentBeacons(t.ctx), 0);
    assert.equal((await audit(as(u), org)).length, 2, 'and writes nothing more');

    // The next beacon turns it on again.
    await post(as(u), { type: 'beacon', lat: 2, lng: 2, meta: { device_id: 'quiet-1' } });
    assert.deepEqual(actions(await audit(as(u), org))[0], ['beacon_on', 'quiet-1']);
    assert.equal((await audit(as(u), org)).length, 3);
  });

  test('a device that keeps beaconing stays on while a silent one goes off', async () => {
    const before = (await audit(as(u), org)).length;
    await post(as(u), { type: 'beacon', meta: { device_id: 'chatty' } });
    await post(as(u), { type: 'beacon', meta: { device_id: 'mute' } });
    t.clock.advance(4 * MINUTE);
    await post(as(u), { type: 'beacon', meta: { device_id: 'chatty' } });
    t.clock.advance(2 * MINUTE); // mute: 6 min silent; chatty: 2 min
    const swept = await sweepSilentBeacons(t.ctx);
    const entries = await audit(as(u), org);
    const fresh = entries.slice(0, entries.length - before);
    assert.ok(fresh.some((e) => e.action === 'beacon_off' && e.device_id === 'mute'));
    assert.ok(!fresh.some((e) => e.action === 'beacon_off' && e.device_id === 'chatty'));
    assert.ok((await beacons(as(u))).some((b) => b.device_id === 'chatty'));
    assert.ok(!(await beacons(as(u))).some((b) => b.device_id === 'mute'));
    assert.ok(swept >= 1);
  });

  test('test-mode devices are swept too, into the test-mode audit only', async () => {
    const testKey = { 'x-api-key': (await createKey(t.app, u.cookie, 'test')).key };
    const liveBefore = (await audit(as(u), org)).length;
    await post(testKey, { type: 'beacon', meta: { device_id: 'test-quiet' } });
    t.clock.advance(6 * MINUTE);
    await sweepSilentBeacons(t.ctx);
    const entries = await audit(testKey, org);
    assert.deepEqual(actions(entries), [
      ['beacon_off', 'test-quiet'],
      ['beacon_on', 'test-quiet'],
    ]);
    assert.deepEqual(entries[0]!.meta, { reason: 'silence' });
    assert.deepEqual(await beacons(testKey), []);
    const live = await audit(as(u), org);
    assert.ok(!live.some((e) => e.device_id === 'test-quiet'));
    assert.ok(live.length >= liveBefore);
  });
});

describe('BEACON_TIMEOUT_MS', () => {
  test('sets how long a device may stay silent', async () => {
    const t = await buildTestApp({ BEACON_TIMEOUT_MS: '60000' });
    try {
      const u = await signUp(t.app);
      const headers = as(u);
      const res = await t.app.inject({ method: 'POST', url: '/v1/signals', headers, payload: { type: 'beacon' } });
      assert.equal(res.statusCode, 201, res.body);
      t.clock.advance(MINUTE - 1);
      assert.equal(await sweepSilentBeacons(t.ctx), 0);
      t.clock.advance(2);
      assert.equal(await sweepSilentBeacons(t.ctx), 1);
    } finally {
      await t.close();
    }
  });
});
