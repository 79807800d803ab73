// Subscriptions and the outgoing guard: what is refused when saved (a private address, http on an
// https instance), and what the connect-time guard refuses when sending (a URL stored earlier, or a
// name that resolves inward), as the booking webhooks (deliveries/ssrf.test.ts).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createSenders } from '../../jobs/outbox-senders.js';
import { processDue } from '../deliveries/worker.js';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { startReceiver, type Receiver } from '../../../test/peers.js';
import { buildWorld, type World } from '../../../test/world.js';

const fieldsOf = (res: { json: () => unknown }) => (res.json() as { details?: { field: string }[] }).details?.map((d) => d.field);

describe('subscriptions behind the outgoing guard (private targets not allowed)', () => {
  let t: TestApp;
  let w: World<'owner'>;
  let receiver: Receiver;
  let slug: string;
  before(async () => {
    t = await buildTestApp({ PUBLIC_URL: 'https://muster.example.com' });
    w = await buildWorld(t, { people: { owner: { name: 'Olga Owner' } }, org: { by: 'owner', personal: true } });
    slug = w.org!.slug;
    receiver = await startReceiver();
    receiver.respond = () => ({ status: 200, body: 'ok' });
  });
  after(async () => {
    await t.close();
    await receiver.close();
  });
  const as = () => w.as(w.people.owner);
  const post = (url: string) => w.call(as(), 'POST', `/v1/orgs/${slug}/webhooks`, { url, events: ['incident.created'], format: 'chat' });

  test('a private or plainly internal URL is a 422 on url, when made or changed; so is http on an https instance', async () => {
    const made = await post('https://hooks.slack.com/services/T0/B0/XXXX');
    assert.equal(made.statusCode, 201, made.body);
    const id = made.json<{ id: number }>().id;
    for (const url of ['https://127.0.0.1:9/hook', 'https://localhost:3000/x', 'https://[::1]/x', 'https://0x7f000001/x', 'https://169.254.169.254/latest/meta-data', 'https://10.1.2.3/x', 'https://[fd00::1]/x', 'http://hooks.example.com/x']) {
      const res = await post(url);
      assert.equal(res.statusCode, 422, `${url}: ${res.body}`);
      assert.deepEqual(fieldsOf(res), ['url'], url);
      const patch = await w.call(as(), 'PATCH', `/v1/orgs/${slug}/webhooks/${id}`, { url });
      assert.equal(patch.statusCode, 422, `${url}: ${patch.body}`);
    }
    await w.ok(as(), 'DELETE', `/v1/orgs/${slug}/webhooks/${id}`);
  });

  test('stored anyway (or a name resolving inward): refused when connecting, failed after one attempt, the receiver untouched; send test says so', async () => {
    const made = await post('https://hooks.example.com/placeholder');
    const id = made.json<{ id: number }>().id;
    const senders = createSenders(t.ctx);
    const inward = [`http://127.0.0.1:${receiver.port}/hook`, `http://localhost:${receiver.port}/hook`, `http://0x7f000001:${receiver.port}/hook`];
    for (const url of inward) {
      await t.ctx.db.updateTable('incident_subscriptions').set({ url }).where('id', '=', id).execute();
      t.ctx.events.endAccess({ subscriptionsOf: w.org!.id });
      await w.ok(as(), 'POST', '/v1/tickets', { title: `Inward ${url}`, org_id: w.org!.id });
      await processDue(t.ctx, senders);
      const rows = await t.ctx.db.selectFrom('outbox').selectAll().where('recipient', '=', url).execute();
      assert.deepEqual(rows.map((r) => [r.status, r.attempts, r.last_error]), [['failed', 1, 'refused: not a public address']], url);
      const tested = await w.ok(as(), 'POST', `/v1/orgs/${slug}/webhooks/${id}/test`, undefined, 200);
      assert.deepEqual(tested, { delivered: false, status_code: null, error: 'refused: not a public address', body: null }, url);
    }
    t.clock.advance(3 * 24 * 3_600_000);
    await processDue(t.ctx, senders);
    const hooks = await t.ctx.db.selectFrom('outbox').select(['status', 'attempts']).where('recipient', 'in', inward).execute();
    assert.deepEqual(hooks.map((r) => [r.status, r.attempts]), [['failed', 1], ['failed', 1], ['failed', 1]], 'nothing is retried');
    assert.equal(receiver.requests.length, 0, 'the receiver was never reached');
  });
});
