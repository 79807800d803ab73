import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/context.js';
import { processDue } from '../../src/modules/deliveries/worker.js';
import { createSenders } from '../../src/jobs/outbox-senders.js';
import { body, buildTestApp, type TestApp } from '../helpers.js';
import { signUp, type TestUser } from '../factories.js';
import { bookPublic, createEventType, pathOf, startSmtp, type SmtpPeer } from '../peers.js';

/**
 * The log of a session that touches every kind of secret (password, session, API key, emailed
 * code, status, management, confirmation and feed tokens), at debug level, with SMTP configured:
 * none of the secrets may appear in it, probes are not logged, and request lines carry their id.
 */
describe('logs', () => {
  let t: TestApp;
  let smtp: SmtpPeer;
  let user: TestUser;
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  before(async () => {
    smtp = await startSmtp();
    const env = { LOG_LEVEL: 'debug', SMTP_URL: smtp.url };
    const destination = {
      write(s: string) {
        raw.push(s);
        lines.push(JSON.parse(s) as Record<string, unknown>);
      },
    };
    t = await buildTestApp(env, { log: createLogger(loadConfig({ ...env, PUBLIC_URL: 'http://muster.test' }), destination) });
    user = await signUp(t.app, { name: 'Lena Logger' });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  test('hold no secret, skip the probes, and name the request on every request line', async () => {
    const secrets: Record<string, string> = { password: user.password, session: user.cookie.split('=')[1]! };
    const headers = { cookie: user.cookie };
    const key = body<{ key: string }>(await t.app.inject({ method: 'POST', url: '/v1/api-keys', headers, payload: { name: 'k', mode: 'live' } })).key;
    secrets.api_key = key;
    assert.equal((await t.app.inject({ url: '/v1/auth/me', headers: { authorization: `Bearer ${key}` } })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/v1/auth/me', headers: { 'x-api-key': key } })).statusCode, 200);

    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: user.email } })).statusCode, 200);
    const incident = body<{ customer_token: string }>(await t.app.inject({ method: 'POST', url: '/v1/tickets', headers, payload: { title: 'Logged' } }));
    secrets.status_token = incident.customer_token;
    assert.equal((await t.app.inject({ url: `/incidents/status/${incident.customer_token}` })).statusCode, 200);
    assert.equal((await t.app.inject({ url: `/v1/incidents/status/${incident.customer_token}?ref=${incident.customer_token}` })).statusCode, 200);

    await createEventType(t.app, headers, { name: 'Approval', slug: 'approval', requires_confirmation: true });
    const booking = await bookPublic(t.app, t.clock, user.slug, 'approval');
    const manage = pathOf(booking.cancel_url);
    secrets.manage_token = manage.split('?')[0]!.split('/').pop()!;
    assert.equal((await t.app.inject({ url: `/v1/bookings/manage/${secrets.manage_token}` })).statusCode, 200);
    const feed = pathOf(body<{ url: string }>(await t.app.inject({ url: '/v1/calendar', headers })).url);
    secrets.feed_token = feed.replace(/^\/calendar\//, '').replace(/\.ics$/, '');
    assert.equal((await t.app.inject({ url: feed })).statusCode, 200);
    // An unknown route carrying a token-like segment (a 404 has no route pattern to fall back on).
    assert.equal((await t.app.inject({ url: `/nowhere/${secrets.manage_token}` })).statusCode, 404);

    // The emails go out through SMTP (the code, the confirm link) and are read from the peer.
    while ((await processDue(t.ctx, createSenders(t.ctx))) > 0);
    const codeMail = smtp.messages.find((m) => /sign-in code is \d{6}/.test(m.text));
    secrets.magic_code = /code is (\d{6})/.exec(codeMail?.text ?? '')?.[1] ?? '';
    assert.match(secrets.magic_code, /^\d{6}$/);
    const confirm = smtp.messages.map((m) => /\/v1\/bookings\/([A-Za-z0-9._-]{20,})\/confirm/.exec(m.text)?.[1]).find(Boolean);
    assert.ok(confirm, 'the host got a confirm link');
    secrets.confirm_token = confirm;
    assert.equal((await t.app.inject({ url: `/v1/bookings/${confirm}/confirm` })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link/verify', payload: { email: user.email, code: secrets.magic_code } })).statusCode, 200);

    const before = lines.length;
    assert.equal((await t.app.inject({ url: '/healthz' })).statusCode, 200);
    assert.equal((await t.app.inject({ url: '/readyz' })).statusCode, 200);
    assert.equal(lines.length, before, 'health and readiness probes are not logged');

    const text = raw.join('');
    for (const [name, secret] of Object.entries(secrets)) assert.ok(secret.length >= 6 && !text.includes(secret), `the ${name} reached the log`);
    const requestLines = lines.filter((l) => l.req !== undefined || l.res !== undefined);
    assert.ok(requestLines.length > 20);
    for (const l of requestLines) assert.equal(typeof l.reqId, 'string', JSON.stringify(l));
    // What the request lines do say: method, route with harmless parameters, query names.
    const urls = lines.flatMap((l) => ((l.req as { url?: string } | undefined)?.url ? [(l.req as { url: string }).url] : []));
    assert.ok(urls.includes('/incidents/status/:token'));
    assert.ok(urls.includes('/v1/incidents/status/:token?ref'));
    assert.ok(urls.includes(`/assign/${user.slug}/approval`) || urls.includes(`/v1/book/${user.slug}/approval`), urls.join('\n'));
    assert.ok(urls.includes('/nowhere/:redacted'));
  });
});
