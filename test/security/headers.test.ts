import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createKey, signUp, type TestUser } from '../factories.js';
import { body, buildTestApp, testDialect, type TestApp, type Headers } from '../helpers.js';

/** The directives of a Content-Security-Policy header, by name. */
function csp(res: LightMyRequestResponse): Map<string, string> {
  const raw = String(res.headers['content-security-policy'] ?? '');
  assert.ok(raw, `${res.statusCode} response has a CSP`);
  return new Map(raw.split(';').map((d) => d.trim()).filter(Boolean).map((d) => [d.split(/\s+/)[0]!, d.slice(d.indexOf(' ') + 1)]));
}

function assertEverywhere(res: LightMyRequestResponse) {
  assert.equal(res.headers['x-content-type-options'], 'nosniff');
  assert.ok(res.headers['referrer-policy'], 'Referrer-Policy');
  assert.equal(res.headers['strict-transport-security'], undefined, 'no HSTS on http');
}

/** A page: scripts and styles only from files of our own origin, nothing inline. */
function assertPagePolicy(res: LightMyRequestResponse) {
  const p = csp(res);
  assert.equal(p.get('default-src'), "'self'");
  assert.equal(p.get('script-src'), "'self'");
  assert.equal(p.get('style-src'), "'self'");
  assert.equal(p.get('object-src'), "'none'");
  assert.equal(p.get('base-uri'), "'self'");
  assert.equal(p.get('form-action'), "'self'");
  assert.doesNotMatch(String(res.headers['content-security-policy']), /unsafe-inline|unsafe-eval/);
}

function assertNotFramable(res: LightMyRequestResponse) {
  assert.equal(csp(res).get('frame-ancestors'), "'none'");
  assert.equal(res.headers['x-frame-options'], 'DENY');
  assert.equal(res.headers['cross-origin-opener-policy'], 'same-origin');
}

/** Server-rendered HTML that a strict CSP would break: inline script, style element or attribute, event handlers. */
function assertNoInline(html: string) {
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)/i);
  assert.doesNotMatch(html, /<style/i);
  assert.doesNotMatch(html, /\sstyle=/i);
  assert.doesNotMatch(html, /\son[a-z]+=/i);
}

describe(`security headers (${testDialect})`, () => {
  let t: TestApp;
  let alice: TestUser;
  let key: Headers;
  before(async () => {
    t = await buildTestApp();
    alice = await signUp(t.app, { name: 'Alice' });
    key = { 'x-api-key': (await createKey(t.app, alice.cookie, 'live')).key };
  });
  after(() => t.close());

  test('JSON answers: nosniff, no framing, nothing to run, and authenticated ones never cached', async () => {
    const me = await t.app.inject({ url: '/v1/auth/me', headers: key });
    assertEverywhere(me);
    assert.equal(me.headers['referrer-policy'], 'strict-origin-when-cross-origin');
    assert.equal(csp(me).get('default-src'), "'none'");
    assertNotFramable(me);
    assert.equal(me.headers['cache-control'], 'no-store');
    for (const res of [await t.app.inject({ url: '/v1/nothing-here' }), await t.app.inject({ url: '/healthz' })]) {
      assertEverywhere(res);
      assert.equal(res.headers['x-frame-options'], 'DENY');
    }
  });

  test('the incident status page: strict CSP, not framable, no referrer, CSS from a file', async () => {
    const incident = body<{ customer_token: string }>(await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: key, payload: { title: '<b>Pump</b> down', description: 'x' } }));
    const page = await t.app.inject({ url: `/incidents/status/${incident.customer_token}` });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assertEverywhere(page);
    assertPagePolicy(page);
    assertNotFramable(page);
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assertNoInline(page.body);
    assert.match(page.body, /<link rel="stylesheet" href="\/pages.css">/);

    const css = await t.app.inject({ url: '/pages.css' });
    assert.equal(css.statusCode, 200);
    assert.match(String(css.headers['content-type']), /^text\/css/);
    assert.match(css.body, /body\.status main\{/);
    assert.match(css.body, /body\.decision button\{/);
    assert.equal(css.headers['x-content-type-options'], 'nosniff');
  });

  test('confirm and decline pages: strict CSP, not framable, no referrer, no inline style', async () => {
    const page = await t.app.inject({ url: '/v1/bookings/not-a-token/confirm' });
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assertPagePolicy(page);
    assertNotFramable(page);
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assertNoInline(page.body);
    assert.match(page.body, /href="\/pages.css"/);
  });

  test('the public booking pages can be embedded anywhere; the dashboard cannot be framed', async () => {
    for (const url of [`/book/${alice.slug}/call`, `/assign/${alice.slug}/call`, '/book/org/team/call']) {
      const res = await t.app.inject({ url });
      assert.match(String(res.headers['content-type']), /^text\/html/, url);
      assertEverywhere(res);
      assertPagePolicy(res);
      assert.equal(csp(res).get('frame-ancestors'), '*', url);
      assert.equal(res.headers['x-frame-options'], undefined, url);
      assert.equal(res.headers['cross-origin-opener-policy'], undefined, url);
    }
    for (const url of ['/app', '/app/incidents', '/field', `/bookings/manage/some-token`]) {
      const res = await t.app.inject({ url });
      assert.match(String(res.headers['content-type']), /^text\/html/, url);
      assertPagePolicy(res);
      assertNotFramable(res);
    }
    assert.equal((await t.app.inject({ url: '/bookings/manage/some-token' })).headers['referrer-policy'], 'no-referrer');
  });

  test('live streams, written straight to the socket, carry nosniff too', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const headers = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
      const req = http.get(`${address}/v1/signals/stream`, { headers: key }, (res) => {
        resolve(res.headers);
        req.destroy();
      });
      req.on('error', reject);
    });
    assert.match(String(headers['content-type']), /^text\/event-stream/);
    assert.equal(headers['x-content-type-options'], 'nosniff');
  });

  test('server timeouts are set: whole request 30 s, headers 10 s, keep-alive longer than a proxy', () => {
    assert.equal(t.app.server.requestTimeout, 30_000);
    assert.equal(t.app.server.headersTimeout, 10_000);
    assert.equal(t.app.server.keepAliveTimeout, 72_000);
  });
});

describe(`security headers under https with an embed allow-list (${testDialect})`, () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ PUBLIC_URL: 'https://muster.example', EMBED_ALLOWED_ORIGINS: 'https://shop.example, https://*.partner.example' });
  });
  after(() => t.close());

  test("HSTS on every answer, and frame-ancestors lists only the allowed sites and Muster itself (the Share panel's preview)", async () => {
    const health = await t.app.inject({ url: '/healthz' });
    assert.equal(health.headers['strict-transport-security'], 'max-age=31536000');
    const page = await t.app.inject({ url: '/book/someone/call' });
    assert.equal(page.headers['strict-transport-security'], 'max-age=31536000');
    assert.equal(csp(page).get('frame-ancestors'), "'self' https://shop.example https://*.partner.example");
    assert.equal(page.headers['x-frame-options'], undefined);
  });
});
