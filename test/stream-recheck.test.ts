import { after, before, describe, test } from 'node:test';
import { iso } from '../src/lib/clock.js';
import { sha256 } from '../src/lib/crypto.js';
import { insertMembership } from '../src/modules/orgs/orgs.repository.js';
import { buildTestApp, injector, type TestApp, type Headers } from './helpers.js';
import { createKey, setPlan, signUp, type TestUser } from './factories.js';
import { listen, type SseClient, within, StreamSet } from './sse-client.js';

// Issue #31 F4: access notices close streams at once, but a notice can be lost (Redis away between
// instances). Every open stream's credential and orgs are also checked on a period
// (STREAM_RECHECK_MS), so access ended without any notice at all still closes its streams. Here the
// changes are made straight in the database, where no notice is ever published.

const RECHECK_MS = 100;

describe('open streams are checked again on a period: access ended without a notice still ends them', () => {
  let t: TestApp;
  let port: number;
  let root: TestUser;
  const streams = new StreamSet(() => port, '/v1/incidents/stream');

  before(async () => {
    t = await buildTestApp({ STREAM_RECHECK_MS: String(RECHECK_MS) });
    root = await signUp(t.app); // the first user: instance admin
    await setPlan(t.app, root.cookie, root.id, 'enterprise');
    port = await listen(t);
  });
  after(async () => {
    await streams.closeAll();
    await t.close();
  });

  const stream = (headers: Headers, path?: string) => streams.open(headers, path);
  /** Several periods: the check runs every RECHECK_MS, so this bound is generous. */
  const ends = (c: SseClient, what: string) => within(c.ended, 20 * RECHECK_MS, what);
  const { ok: call } = injector(() => t.app);
  const receives = async (c: SseClient, headers: Headers, title: string) => {
    const created = await call<{ Id: number }>('POST', '/v1/incidents', headers, { title });
    await c.waitForEvent('incident.created', (p) => p.Id === created.Id, 2_000);
  };
  const sessionHash = (cookie: string) => sha256(cookie.slice(cookie.indexOf('=') + 1));

  test('a key revoked behind the notices’ back closes its streams; the user’s other credentials stay', async () => {
    const user = await signUp(t.app);
    const [revoked, kept] = [await createKey(t.app, user.cookie, 'live'), await createKey(t.app, user.cookie, 'live')];
    const incidents = await stream({ 'x-api-key': revoked.key });
    const signals = await stream({ 'x-api-key': revoked.key }, '/v1/signals/stream');
    const other = await stream({ 'x-api-key': kept.key });
    await t.ctx.db.updateTable('api_keys').set({ revoked_at: iso(t.clock.now()) }).where('id', '=', revoked.id).execute();
    await ends(incidents, 'the revoked key’s incident stream closing');
    await ends(signals, 'the revoked key’s signal stream closing');
    await receives(other, { cookie: user.cookie }, 'still here');
  });

  test('a session deleted behind the notices’ back closes its stream', async () => {
    const user = await signUp(t.app);
    const key = await createKey(t.app, user.cookie, 'live');
    const session = await stream({ cookie: user.cookie });
    const keyed = await stream({ 'x-api-key': key.key });
    await t.ctx.db.deleteFrom('sessions').where('id', '=', sessionHash(user.cookie)).execute();
    await ends(session, 'the deleted session’s stream closing');
    await receives(keyed, { 'x-api-key': key.key }, 'the key’s stream stays');
  });

  test('a membership removed behind the notices’ back closes the streams that carry the org', async () => {
    const user = await signUp(t.app);
    const key = await createKey(t.app, user.cookie, 'live');
    const org = await call<{ id: number }>('POST', '/v1/orgs', { cookie: root.cookie }, { name: `Recheck ${Math.random().toString(36).slice(2, 8)}` });
    await insertMembership(t.ctx.db, { orgId: org.id, userId: user.id, role: 'member', primary: false, createdAt: iso(t.clock.now()) });
    const wide = await stream({ 'x-api-key': key.key });
    await t.ctx.db.deleteFrom('memberships').where('org_id', '=', org.id).where('user_id', '=', user.id).execute();
    await ends(wide, 'the stream that carried the org closing');
    t.clock.advance(60_000); // past the credential cache's TTL, which no notice emptied either
    const reopened = await stream({ 'x-api-key': key.key });
    await receives(reopened, { 'x-api-key': key.key }, 'reopened without the org, it stays');
  });
});
