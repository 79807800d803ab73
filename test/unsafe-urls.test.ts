import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { body, buildTestApp, type TestApp } from './helpers.js';
import { signUp, type TestUser } from './factories.js';

// Issue 14, item 12: URLs that would run script or reach inside are refused when saved.
const fieldsOf = (res: { body: string }) => body<{ details?: { field: string }[] }>(res as never).details?.map((d) => d.field);

describe('unsafe URLs', () => {
  let t: TestApp;
  let open: TestApp;
  let user: TestUser;
  before(async () => {
    t = await buildTestApp();
    open = await buildTestApp({ MUSTER_ALLOW_PRIVATE_WEBHOOKS: '1' });
    user = await signUp(t.app);
  });
  after(async () => {
    await t.close();
    await open.close();
  });

  test("a capture's image_url must be http(s); other hosts than ours are allowed", async () => {
    const post = (image_url: string) => t.app.inject({ method: 'POST', url: '/v1/signals', headers: { cookie: user.cookie }, payload: { type: 'capture', image_url } });
    for (const bad of ['javascript:alert(1)', 'JavaScript:alert(1)', 'data:image/png;base64,AAAA', 'vbscript:x', 'file:///etc/passwd', 'ftp://example.com/a.png', 'http:/example.com', 'https:///x']) {
      const res = await post(bad);
      assert.equal(res.statusCode, 422, `${bad}: ${res.body}`);
      assert.deepEqual(fieldsOf(res), ['image_url'], bad);
    }
    for (const good of ['http://muster.test/uploads/a.png', 'https://images.example.com/photo.jpg', 'HTTPS://CDN.EXAMPLE.COM/x.webp']) {
      const res = await post(good);
      assert.equal(res.statusCode, 201, `${good}: ${res.body}`);
      assert.equal(body<{ image_url: string }>(res).image_url, good);
    }
  });

  test('a private webhook_url is a 422 when an event type is created or changed', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/event-types', headers: { cookie: user.cookie }, payload: { name: 'Hooked', duration_minutes: 30, webhook_url: 'https://hooks.example.com/ok' } });
    assert.equal(created.statusCode, 201, created.body);
    const id = body<{ id: number }>(created).id;
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:3000/x', 'http://[::1]/x', 'http://0x7f000001/x', 'http://169.254.169.254/latest/meta-data', 'http://10.1.2.3/x', 'http://[fd00::1]/x']) {
      const create = await t.app.inject({ method: 'POST', url: '/v1/event-types', headers: { cookie: user.cookie }, payload: { name: 'Inward', duration_minutes: 30, webhook_url: url } });
      assert.equal(create.statusCode, 422, `${url}: ${create.body}`);
      assert.deepEqual(fieldsOf(create), ['webhook_url']);
      const patch = await t.app.inject({ method: 'PATCH', url: `/v1/event-types/${id}`, headers: { cookie: user.cookie }, payload: { webhook_url: url } });
      assert.equal(patch.statusCode, 422, `${url}: ${patch.body}`);
    }
    const cleared = await t.app.inject({ method: 'PATCH', url: `/v1/event-types/${id}`, headers: { cookie: user.cookie }, payload: { webhook_url: null } });
    assert.equal(cleared.statusCode, 200, cleared.body);
  });

  test('with MUSTER_ALLOW_PRIVATE_WEBHOOKS a private webhook_url is saved', async () => {
    const u = await signUp(open.app);
    const res = await open.app.inject({ method: 'POST', url: '/v1/event-types', headers: { cookie: u.cookie }, payload: { name: 'Local', duration_minutes: 30, webhook_url: 'http://127.0.0.1:9/hook' } });
    assert.equal(res.statusCode, 201, res.body);
  });
});
