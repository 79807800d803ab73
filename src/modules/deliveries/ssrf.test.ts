import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { createKey, setPlan, signUp, type TestUser } from '../../../test/factories.js';
import { bookPublic, createEventType, hasIpv6Loopback, listDeliveries, startReceiver, type Receiver } from '../../../test/peers.js';
import { postGuarded } from './http-post.js';
import { BlockedAddressError, isPrivateAddress } from './ssrf.js';
import { processDue, type Senders } from './worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';

describe('isPrivateAddress', () => {
  const cases: [string, boolean, string][] = [
    // IPv4
    ['127.0.0.1', true, 'loopback'],
    ['127.255.255.254', true, 'loopback /8'],
    ['0.0.0.0', true, 'unspecified (reaches the host itself)'],
    ['10.0.0.1', true, 'private 10/8'],
    ['10.255.255.255', true, 'private 10/8'],
    ['172.16.0.1', true, 'private 172.16/12'],
    ['172.31.255.255', true, 'private 172.16/12'],
    ['192.168.1.1', true, 'private 192.168/16'],
    ['169.254.169.254', true, 'link-local (cloud metadata)'],
    ['169.254.0.1', true, 'link-local'],
    ['100.64.0.1', true, 'carrier-grade NAT'],
    ['100.127.255.255', true, 'carrier-grade NAT'],
    ['224.0.0.1', true, 'multicast'],
    ['255.255.255.255', true, 'broadcast'],
    ['198.18.0.1', true, 'benchmarking'],
    ['192.0.2.1', true, 'documentation'],
    ['8.8.8.8', false, 'public'],
    ['1.1.1.1', false, 'public'],
    ['172.15.255.255', false, 'just below 172.16/12'],
    ['172.32.0.1', false, 'just above 172.16/12'],
    ['100.63.255.255', false, 'just below CGNAT'],
    ['100.128.0.1', false, 'just above CGNAT'],
    ['192.169.0.1', false, 'just above 192.168/16'],
    ['11.0.0.1', false, 'just above 10/8'],
    // IPv6
    ['::1', true, 'loopback'],
    ['::', true, 'unspecified'],
    ['fc00::1', true, 'unique local'],
    ['fd12:3456:789a::1', true, 'unique local'],
    ['fe80::1', true, 'link-local'],
    ['FE80::abcd', true, 'link-local, upper case'],
    ['ff02::1', true, 'multicast'],
    ['2001:db8::1', true, 'documentation'],
    ['2606:4700::1', false, 'public'],
    ['2001:4860:4860::8888', false, 'public'],
    // IPv4 inside IPv6
    ['::ffff:127.0.0.1', true, 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', true, 'IPv4-mapped loopback, hex'],
    ['0:0:0:0:0:ffff:7f00:1', true, 'IPv4-mapped loopback, uncompressed'],
    ['::ffff:10.0.0.1', true, 'IPv4-mapped private'],
    ['::ffff:a9fe:a9fe', true, 'IPv4-mapped metadata address'],
    ['::ffff:8.8.8.8', false, 'IPv4-mapped public'],
    ['64:ff9b::7f00:1', true, 'NAT64 of loopback'],
    ['64:ff9b::10.0.0.1', true, 'NAT64 of private'],
    ['64:ff9b::169.254.169.254', true, 'NAT64 of metadata'],
    ['64:ff9b::808:808', false, 'NAT64 of 8.8.8.8'],
    // Not an address: refused rather than guessed
    ['localhost', true, 'a name'],
    ['', true, 'empty'],
    ['010.0.0.1', true, 'leading zeros (ambiguous octal)'],
  ];
  for (const [ip, expected, why] of cases) {
    test(`${ip || '(empty)'} → ${expected} (${why})`, () => {
      assert.equal(isPrivateAddress(ip), expected);
    });
  }
});

describe('SSRF guard on (no MUSTER_ALLOW_PRIVATE_WEBHOOKS): webhooks never reach internal addresses', () => {
  let t: TestApp;
  let senders: Senders;
  let host: TestUser;
  let hostKey: Headers;
  let v4: Receiver;
  let v6: Receiver | undefined;
  let hits = 0;
  let seq = 0;

  before(async () => {
    t = await buildTestApp({ WEBHOOK_TIMEOUT_MS: '1000' });
    senders = createSenders(t.ctx);
    const root = await signUp(t.app, { name: 'Root' });
    host = await signUp(t.app, { name: 'Hanna Host' });
    await setPlan(t.app, root.cookie, host.id, 'enterprise');
    hostKey = { 'x-api-key': (await createKey(t.app, host.cookie, 'live')).key };
    // A real server on the loopback (both families when there is an IPv6 loopback), counting
    // every request that reaches it.
    v4 = await startReceiver({ host: '127.0.0.1' });
    v4.respond = () => ((hits += 1), { status: 200 });
    if (await hasIpv6Loopback()) {
      v6 = await startReceiver({ host: '::1' });
      v6.respond = () => ((hits += 1), { status: 200 });
    }
  });
  after(async () => {
    await t.close();
    await v4.close();
    await v6?.close();
  });

  /** Books an event type whose webhook goes to `url`, runs the worker, and answers the delivery. */
  async function attempt(url: string) {
    seq += 1;
    // Saving a plainly private URL is refused (test/unsafe-urls.test.ts); the connect-time guard is
    // what stops one stored earlier, or a public name that resolves inward later: store it directly.
    const et = await createEventType(t.app, hostKey, { name: `Target ${seq}`, slug: `target-${seq}`, webhook_url: 'https://hooks.example.com/placeholder' });
    await t.ctx.db.updateTable('event_types').set({ webhook_url: url }).where('id', '=', et.id).execute();
    await bookPublic(t.app, t.clock, host.slug, et.slug);
    await processDue(t.ctx, senders);
    const d = (await listDeliveries(t.app, hostKey)).find((x) => x.kind === 'webhook' && x.recipient === url);
    assert.ok(d, `a webhook delivery to ${url}`);
    return d;
  }

  const targets = () => {
    const p = v4.port;
    const list: [string, string][] = [
      [`http://127.0.0.1:${p}/`, 'loopback literal'],
      [`http://10.0.0.1/`, 'private literal'],
      [`http://169.254.169.254/latest/meta-data/`, 'cloud metadata'],
      [`http://2130706433:${p}/`, 'decimal spelling of 127.0.0.1'],
      [`http://0x7f000001:${p}/`, 'hex spelling of 127.0.0.1'],
      [`http://0177.0.0.1:${p}/`, 'octal spelling of 127.0.0.1'],
      [`http://127.1:${p}/`, 'short spelling of 127.0.0.1'],
      [`http://0.0.0.0:${p}/`, 'unspecified address (reaches the host)'],
      [`http://[::ffff:127.0.0.1]:${p}/`, 'IPv4-mapped IPv6 loopback'],
      [`http://localhost:${p}/`, 'a name resolving to the loopback'],
    ];
    if (v6) list.push([`http://[::1]:${v6.port}/`, 'IPv6 loopback'], [`http://[::]:${v6.port}/`, 'IPv6 unspecified']);
    // Without an IPv6 loopback on this machine the [::1] case has no server to protect: it is
    // left out (the literal is still refused by isPrivateAddress above).
    return list;
  };

  test('each internal target is refused before connecting: failed after one attempt, the server untouched', async () => {
    for (const [url, why] of targets()) {
      const d = await attempt(url);
      assert.equal(hits, 0, `${why}: ${url} never reaches the server`);
      assert.equal(d.status, 'failed', `${why}: failed for good (${d.last_error})`);
      assert.equal(d.attempts, 1, why);
      assert.equal(d.next_attempt_at, null, why);
      assert.equal(d.attempt_log.length, 1, why);
      assert.equal(d.attempt_log[0]?.outcome, 'failed');
      // Never the address a name resolved to (issue #31, F11): the owner of the URL learns nothing of the network.
      assert.equal(d.last_error, 'refused: not a public address', why);
    }
    t.clock.advance(3 * 24 * 3_600_000);
    assert.equal(await processDue(t.ctx, senders), 0, 'nothing is retried');
    assert.equal(hits, 0);
  });

  test('postGuarded refuses the same targets at connect time, and reaches them only when private targets are allowed', async () => {
    for (const [url, why] of targets()) {
      await assert.rejects(postGuarded(url, '{}', { 'content-type': 'application/json' }, { timeoutMs: 1000, allowPrivate: false }), BlockedAddressError, why);
    }
    assert.equal(hits, 0);
    // The server is really there: with the guard off, the same URL reaches it.
    const res = await postGuarded(`http://127.0.0.1:${v4.port}/`, '{}', {}, { timeoutMs: 1000, allowPrivate: true });
    assert.equal(res.status, 200);
    assert.equal(hits, 1);
    if (v6) {
      await postGuarded(`http://[::1]:${v6.port}/`, '{}', {}, { timeoutMs: 1000, allowPrivate: true });
      assert.equal(hits, 2);
    }
  });
});
