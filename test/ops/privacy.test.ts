// A person's data (issue #22): the export (contents, no secrets, nothing of anyone else), account
// deletion (proof, 409 for a sole owner, what stays and what goes, files removed, access ended)
// and an owner deleting a member's signals. Both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp } from '../helpers.js';
import { createKey, emailedCode, signUp, type TestUser } from '../factories.js';
import { bookPublic, createEventType } from '../peers.js';
import { exists, fileOf, postSignal, signalIds, upload } from './ops-kit.js';
import { sharedOrg } from '../world.js';
import { defaultJobs } from '../../src/jobs/scheduler.js';
import * as privacyRepo from '../../src/modules/privacy/privacy.repository.js';
import { deleteMemberlessOrgs } from '../../src/modules/privacy/privacy.service.js';
import { findUserById } from '../../src/modules/users/users.repository.js';

interface Export {
  profile: { id: number; email: string };
  memberships: { org_id: number; role: string }[];
  api_keys: { id: number; last4: string }[];
  signals: { Id: number; note: string | null; image_url: string | null }[];
  uploads: string[];
  incidents: { Id: number; title: string }[];
  replies: { body: string }[];
  bookings: { hosted: { id: string }[]; attended: { id: string }[] };
  calendars: { name: string }[];
  audit: { action: string }[];
}

describe('export and deletion', () => {
  let t: TestApp;
  let ada: TestUser; // instance admin, owner of the shared org
  let bob: TestUser; // a member of it
  let org: { id: number; slug: string };
  let adaKey: string;
  let bobKey: string;

  before(async () => {
    t = await buildTestApp();
    ada = await signUp(t.app, { name: 'Ada Exporter' });
    bob = await signUp(t.app, { name: 'Bob Bystander' });
    org = await sharedOrg(t.app, { by: ada, lift: ada, members: [{ user: bob, role: 'member' }] });
    adaKey = (await createKey(t.app, ada.cookie, 'live', 'ada key')).key;
    bobKey = (await createKey(t.app, bob.cookie, 'live', 'bob key')).key;
  });
  after(() => t.close());

  const as = (u: TestUser) => ({ cookie: u.cookie });

  test('the export holds what is the caller’s, without secrets, and nothing of another user', async () => {
    const image = await upload(t.app, as(ada));
    await postSignal(t.app, as(ada), { type: 'capture', image_url: image, org_id: org.id, note: 'ada-capture' });
    await postSignal(t.app, as(ada), { type: 'beacon', lat: 1, lng: 2, meta: { device_id: 'dev-adaada-00000001' } });
    const inc = (await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: as(ada), payload: { title: 'ada-incident', org_id: org.id } })).json<{ Id: number }>();
    await t.app.inject({ method: 'POST', url: `/v1/incidents/${inc.Id}/replies`, headers: as(ada), payload: { body: 'ada-reply' } });
    await t.app.inject({ method: 'POST', url: '/v1/calendars', headers: as(ada), payload: { kind: 'ics', url: 'http://127.0.0.1:9/ada.ics', name: 'ada-calendar' } });
    // Bob's things, in the same org, and a booking Ada makes with Bob by her address.
    await postSignal(t.app, as(bob), { type: 'note', note: 'bob-note', org_id: org.id });
    await t.app.inject({ method: 'POST', url: `/v1/incidents/${inc.Id}/replies`, headers: as(bob), payload: { body: 'bob-reply' } });
    const et = await createEventType(t.app, as(bob), { name: 'Bob call', slug: 'bob-call' });
    const booking = await bookPublic(t.app, t.clock, bob.slug, et.slug, { attendee_name: 'Ada', attendee_email: ada.email });

    const res = await t.app.inject({ method: 'GET', url: '/v1/auth/me/export', headers: as(ada) });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="muster-export-\d+\.json"$/);
    const x = res.json<Export>();
    assert.equal(x.profile.email, ada.email);
    assert.ok(x.memberships.some((m) => m.org_id === org.id && m.role === 'owner'));
    assert.ok(x.api_keys.some((k) => k.last4 === adaKey.slice(-4)));
    assert.ok(x.signals.some((s) => s.note === 'ada-capture' && s.image_url === image));
    assert.deepEqual(x.uploads, [image]);
    assert.ok(x.incidents.some((i) => i.title === 'ada-incident'));
    assert.deepEqual(x.replies.map((r) => r.body), ['ada-reply']);
    assert.ok(x.calendars.some((c) => c.name === 'ada-calendar'));
    assert.ok(x.audit.some((a) => a.action === 'beacon_on'));
    assert.deepEqual(x.bookings.attended.map((b) => b.id), [booking.id]);
    // Nothing of Bob's, and no secret of Ada's.
    for (const foreign of ['bob-note', 'bob-reply', 'Bob call', bob.email, bobKey, adaKey, ada.password, ada.cookie.split('=')[1]!, 'password_hash', 'key_hash', 'token_hash']) {
      assert.ok(!res.body.includes(foreign), `the export holds ${foreign}`);
    }
    // Bob's own export has his booking as host and not Ada's signals.
    const bobs = (await t.app.inject({ method: 'GET', url: '/v1/auth/me/export', headers: { 'x-api-key': bobKey } })).json<Export>();
    assert.deepEqual(bobs.bookings.hosted.map((b) => b.id), [booking.id]);
    assert.ok(!JSON.stringify(bobs).includes('ada-capture'));
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/auth/me/export' })).statusCode, 401);
  });

  test('an owner deletes a member’s signals in the org, with their photos; admins and members may not', async () => {
    const image = await upload(t.app, as(bob));
    const mine = (await postSignal(t.app, as(bob), { type: 'capture', image_url: image, org_id: org.id })).Id!;
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/orgs/${org.slug}/members/${bob.id}/signals`, headers: as(bob) })).statusCode, 403);
    const res = await t.app.inject({ method: 'DELETE', url: `/v1/orgs/${org.slug}/members/${bob.id}/signals`, headers: as(ada) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<{ deleted: number }>().deleted, 2);
    assert.ok(!(await signalIds(t.app, as(ada), `&org_id=${org.id}`)).includes(mine));
    assert.equal(exists(fileOf(t, image)), false);
    const audit = (await t.app.inject({ method: 'GET', url: `/v1/audit?org_id=${org.id}`, headers: as(ada) })).json<{ entries: { action: string; meta: { member_id: number } }[] }>();
    assert.ok(audit.entries.some((e) => e.action === 'member_signals_deleted' && e.meta.member_id === bob.id));
  });

  test('deletion needs the password (422 without, 401 wrong) and is refused (409) to the only owner of an org with members', async () => {
    const none = await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: as(ada), payload: {} });
    assert.equal(none.statusCode, 422);
    assert.equal(none.json<{ details: { field: string }[] }>().details[0]!.field, 'password');
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: as(ada), payload: { password: 'not it at all' } })).statusCode, 401);
    const sole = await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: as(ada), payload: { password: ada.password } });
    assert.equal(sole.statusCode, 409, sole.body);
    assert.match(sole.json<{ error: string }>().error, new RegExp(org.slug));
  });

  test('deleting removes sessions, keys, signals and files; incidents stay; replies show "Deleted user"; access ends', async () => {
    // Ada hands the org to Bob, then deletes her account.
    assert.equal((await t.app.inject({ method: 'PATCH', url: `/v1/orgs/${org.slug}/members/${bob.id}`, headers: as(ada), payload: { role: 'owner' } })).statusCode, 200);
    const image = (await t.app.inject({ method: 'GET', url: '/v1/auth/me/export', headers: as(ada) })).json<Export>().uploads[0]!;
    assert.equal(exists(fileOf(t, image)), true);
    const incidents = (await t.app.inject({ method: 'GET', url: `/v1/tickets?limit=200`, headers: as(bob) })).json<{ tickets: { Id: number; title: string }[] }>();
    const inc = incidents.tickets.find((i) => i.title === 'ada-incident')!;

    const res = await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: { 'x-api-key': adaKey }, payload: { password: ada.password } });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { deleted: true });
    assert.match(String(res.headers['set-cookie']), /^muster_session=;.*Max-Age=0.*Expires=Thu, 01 Jan 1970/, 'the browser forgets the session cookie');

    for (const headers of [as(ada), { 'x-api-key': adaKey }]) assert.equal((await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { email: ada.email, password: ada.password } })).statusCode, 401);
    assert.equal(exists(fileOf(t, image)), false, 'her photo is gone');
    const left = (await t.app.inject({ method: 'GET', url: `/v1/signals?org_id=${org.id}`, headers: as(bob) })).json<{ signals: { user_id: number | null }[] }>();
    assert.ok(left.signals.every((s) => s.user_id !== ada.id), 'her signals are gone');
    assert.equal((await t.app.inject({ method: 'GET', url: `/v1/tickets/${inc.Id}`, headers: as(bob) })).statusCode, 200, 'the incident stays');
    const replies = (await t.app.inject({ method: 'GET', url: `/v1/incidents/${inc.Id}/replies`, headers: as(bob) })).json<{ replies: { body: string; author_name: string | null }[] }>();
    assert.equal(replies.replies.find((r) => r.body === 'ada-reply')?.author_name, 'Deleted user');
    assert.equal(replies.replies.find((r) => r.body === 'bob-reply')?.author_name, 'Bob Bystander');
    const members = (await t.app.inject({ method: 'GET', url: `/v1/orgs/${org.slug}/members`, headers: as(bob) })).json<{ members: { user_id: number }[] }>();
    assert.ok(!members.members.some((m) => m.user_id === ada.id));
    for (const table of ['sessions', 'api_keys', 'memberships', 'calendar_connections'] as const) {
      const n = await t.ctx.db.selectFrom(table).select('user_id').where('user_id', '=', ada.id).execute();
      assert.equal(n.length, 0, table);
    }
    assert.equal((await t.ctx.db.selectFrom('orgs').select('id').where('owner_id', '=', ada.id).where('personal', '=', 1).execute()).length, 0, 'her personal org went too');
    // The address is free again.
    const again = await t.app.inject({ method: 'POST', url: '/v1/users', payload: { email: ada.email, password: 'another good password', name: 'Ada Again' } });
    assert.equal(again.statusCode, 201, again.body);
  });

  test('an account without a password proves it with a fresh sign-in code', async () => {
    const cleo = await signUp(t.app, { name: 'Cleo Codes' });
    await t.ctx.db.updateTable('users').set({ password_hash: null }).where('id', '=', cleo.id).execute();
    const without = await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: as(cleo), payload: {} });
    assert.equal(without.statusCode, 422);
    assert.equal(without.json<{ details: { field: string }[] }>().details[0]!.field, 'code');
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: as(cleo), payload: { password: cleo.password } })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: cleo.email } })).statusCode, 200);
    const code = await emailedCode(t.app, cleo.email, 'auth.magic_code');
    const wrong = code === '000000' ? '111111' : '000000';
    assert.equal((await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: as(cleo), payload: { code: wrong } })).statusCode, 401);
    // The wrong try spent one of the code's five attempts; the right one still works.
    const res = await t.app.inject({ method: 'DELETE', url: '/v1/auth/me', headers: as(cleo), payload: { code } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/auth/me', headers: as(cleo) })).statusCode, 401);
  });
});

describe('orgs left without members', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp();
  });
  after(() => t.close());

  test('a deletion that stopped between its two transactions leaves orgs without members; the memberless-orgs job deletes them with their files, and spares orgs with a member', async () => {
    const carol = await signUp(t.app, { name: 'Carol Crashed' });
    const dan = await signUp(t.app, { name: 'Dan Stays' });
    const shop = await sharedOrg(t.app, { by: carol, lift: carol, members: [{ user: dan, role: 'member' }] });
    // Dan's own org: it has a member and stays.
    const shared = (await t.app.inject({ method: 'GET', url: '/v1/orgs', headers: { cookie: dan.cookie } })).json<{ orgs: { id: number }[] }>().orgs[0]!;
    // Dan leaves a photo in the shop, then is removed from it: his capture stays in the org.
    const image = await upload(t.app, { cookie: dan.cookie });
    await postSignal(t.app, { cookie: dan.cookie }, { type: 'capture', image_url: image, org_id: shop.id, note: 'in the shop' });
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/orgs/${shop.slug}/members/${dan.id}`, headers: { cookie: carol.cookie } })).statusCode, 200);
    const inc = (await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: { cookie: carol.cookie }, payload: { title: 'shop incident', org_id: shop.id } })).json<{ Id: number }>();
    await postSignal(t.app, { cookie: dan.cookie }, { type: 'note', note: 'dan in the shared org', org_id: shared.id });

    // What DELETE /v1/auth/me's first transaction leaves when the process dies before its second: Carol and her
    // signals gone, the shop still there without a member.
    const user = (await findUserById(t.ctx.db, carol.id))!;
    await t.ctx.transaction(async (tx) => {
      await privacyRepo.deleteSignalsOf(tx.db, user.id);
      await privacyRepo.deleteAccount(tx.db, user);
    });
    const orgIds = async () => (await t.ctx.db.selectFrom('orgs').select('id').orderBy('id').execute()).map((r) => r.id);
    assert.ok((await orgIds()).includes(shop.id), 'the crash left the org');
    const before = await privacyRepo.memberlessOrgIds(t.ctx.db, undefined, 100);
    assert.ok(before.includes(shop.id) && !before.includes(shared.id), `memberless: ${before.join(", ")}`);

    const result = await deleteMemberlessOrgs(t.ctx);
    assert.ok(result.orgs >= 1);
    assert.deepEqual(await privacyRepo.memberlessOrgIds(t.ctx.db, undefined, 100), [], 'none left');
    const left = await orgIds();
    assert.equal(left.includes(shop.id), false, 'the memberless org is gone');
    assert.ok(left.includes(shared.id), 'the org Dan belongs to stays');
    assert.equal((await t.ctx.db.selectFrom('incidents').select('id').where('id', '=', inc.Id).execute()).length, 0, 'its incidents went with it');
    assert.equal(exists(fileOf(t, image)), false, 'the photo left in it is removed');
    const danSignals = (await t.app.inject({ method: 'GET', url: `/v1/signals?org_id=${shared.id}`, headers: { cookie: dan.cookie } })).json<{ signals: { note: string | null }[] }>();
    assert.deepEqual(danSignals.signals.map((s) => s.note), ['dan in the shared org']);
    // The job is part of the scheduler's defaults, on the retention sweep's interval.
    assert.ok(defaultJobs(t.ctx).some((j) => j.name === 'memberless-orgs'));
  });
});
