import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { authenticate } from 'mailauth';
import nodemailer from 'nodemailer';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { integrationsWorld, type IntegrationsWorld } from '../../../test/world.js';
import { mailDns, refusalCode, sendTo, type DkimKey, type SendOptions } from '../../../test/mail-kit.js';
import { startInboundSmtp, type InboundListener } from './smtp-listener.js';

// Issue 31 F9 and issue 32 (allowed_senders): who a message is from is its From:, and From: counts
// for membership only when it is authenticated: DMARC alignment through DKIM or SPF (mailauth, on a
// DNS the test controls), a trusted relay's Authentication-Results, or a trusted forwarder's ARC
// seal. Every message goes through the real SMTP listener, signed as real servers sign.
describe('mail authentication', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let smtp: InboundListener;
  const dns = mailDns();
  let exampleCom: DkimKey;
  let other: DkimKey;
  let forwarder: DkimKey;
  const live = () => ({ 'x-api-key': w.liveKey });
  // 127.0.0.2 plays the organisation's own relay; the tests' usual client (127.0.0.1) is the internet.
  const RELAY = '127.0.0.2';

  before(async () => {
    t = await buildTestApp({
      INBOUND_EMAIL_DOMAIN: 'in.muster.test',
      INBOUND_SMTP_PORT: '0',
      INBOUND_SMTP_HOST: '127.0.0.1',
      INBOUND_TRUSTED_RELAYS: `${RELAY}/32`,
      INBOUND_TRUSTED_AUTHSERV_IDS: 'relay.example.com',
      INBOUND_TRUSTED_FORWARDERS: 'fwd.example.net',
    });
    w = await integrationsWorld(t);
    exampleCom = dns.dkim('example.com');
    dns.txt('_dmarc.example.com', 'v=DMARC1; p=reject');
    other = dns.dkim('evil.example.net');
    forwarder = dns.dkim('fwd.example.net', 'arc');
    // A domain that authenticates by SPF alone (no DKIM): its servers are 127.0.0.1.
    dns.txt('spf.example.org', 'v=spf1 ip4:127.0.0.1 -all');
    dns.txt('_dmarc.spf.example.org', 'v=DMARC1; p=quarantine');
    // A domain with neither DKIM nor DMARC, whose mail reaches Muster through a forwarder (ARC).
    dns.txt('plain.example.org', 'v=spf1 ip4:192.0.2.10 -all');
    smtp = await startInboundSmtp(t.ctx, { resolver: dns.resolver });
  });
  after(async () => {
    await smtp.close();
    await t.close();
  });

  const send = (mail: nodemailer.SendMailOptions, o?: SendOptions) => sendTo(smtp.port, mail, o);

  /** An incident reported by email, and its reply address. */
  async function reported(tag: string): Promise<{ id: number; replyTo: string }> {
    const i = await w.integration();
    await send({ from: `caller-${tag}@example.org`, to: i.email_address!, subject: `Report ${tag}`, text: 'Help.', messageId: `<${tag}@example.org>` });
    await smtp.drain();
    const [ticket] = await w.tickets(live(), `?source_ref=${encodeURIComponent(`email:<${tag}@example.org>`)}`);
    const ack = await t.ctx.db.selectFrom('outbox').select('payload').where('topic', '=', 'incident.email_received').where('recipient', '=', `caller-${tag}@example.org`).executeTakeFirstOrThrow();
    return { id: ticket!.Id, replyTo: (JSON.parse(ack.payload) as { reply_to: string }).reply_to };
  }
  async function replies(id: number) {
    const res = await w.call(live(), 'GET', `/v1/tickets/${id}/replies`);
    return res.json<{ replies: { body: string; public: boolean; author_id: number | null }[] }>().replies.map((r) => [r.body, r.public, r.author_id]);
  }
  async function replyEvents(id: number) {
    return (await w.timelineTypes(id)).filter((e) => e.type === 'reply').map((e) => ({ from: e.data.from, authenticated: e.data.authenticated, unverified: e.data.unverified ?? false }));
  }

  test("a member's reply is theirs (internal) only when DKIM aligned with From: authenticates it; otherwise external and unverified", async () => {
    const { id, replyTo } = await reported('f9-dkim');
    // The repro of F9: the envelope names the member, nothing is signed.
    await send({ from: w.member.email, to: replyTo, subject: 'Re', text: 'Unsigned, envelope says member.' }, { envelope: { from: w.member.email, to: [replyTo] } });
    // Signed, but by another domain than From:'s: not aligned.
    await send({ from: w.member.email, to: replyTo, subject: 'Re', text: 'Signed by someone else.' }, { dkim: other });
    // Signed by the member's own domain.
    await send({ from: w.member.email, to: replyTo, subject: 'Re', text: 'Signed by example.com.' }, { dkim: exampleCom });
    await smtp.drain();
    assert.deepEqual(await replies(id), [
      ['Unsigned, envelope says member.', false, null],
      ['Signed by someone else.', false, null],
      ['Signed by example.com.', false, w.member.id],
    ]);
    const events = await replyEvents(id);
    assert.deepEqual(events.map((e) => [e.authenticated, e.unverified]), [
      [false, true],
      [false, true],
      [true, false],
    ]);
    // Unverified replies stay off the status page.
    const view = (await w.call(live(), 'GET', `/v1/tickets/${id}`)).json<{ customer_token: string }>();
    const page = (await t.app.inject({ url: `/v1/incidents/status/${view.customer_token}` })).json<{ replies: unknown[] }>();
    assert.equal(page.replies.length, 0);
  });

  test('a trusted relay (by address) is believed about DMARC; the same header from anywhere else is not', async () => {
    const { id, replyTo } = await reported('f9-relay');
    const relayed = (body: string, authserv: string) => ({
      from: w.member.email,
      to: replyTo,
      subject: 'Re',
      text: body,
      headers: { 'Authentication-Results': `${authserv}; dkim=pass header.d=example.com; dmarc=pass (p=reject) header.from=example.com` },
    });
    await send(relayed('Through our relay.', 'relay.example.com'), { localAddress: RELAY });
    await send(relayed('Claims to be the relay, from elsewhere.', 'relay.example.com'));
    await send(relayed('Our relay, another authserv-id.', 'mx.elsewhere.example'), { localAddress: RELAY });
    await smtp.drain();
    assert.deepEqual(await replies(id), [
      ['Through our relay.', false, w.member.id],
      ['Claims to be the relay, from elsewhere.', false, null],
      ['Our relay, another authserv-id.', false, null],
    ]);
  });

  test('allowed_senders judges the authenticated From:, not the envelope: SPF-aligned and DKIM-signed mail passes, forwarded (SRS) too', async () => {
    const strict = await w.integration(undefined, { allowed_senders: ['example.com', 'spf.example.org'] });
    const to = strict.email_address!;
    // DKIM-signed, forwarded: the envelope is the forwarder's SRS address, which is no allowed domain.
    await send({ from: 'ops@example.com', to, subject: 'Forwarded, signed', text: 'ok', messageId: '<as-1@example.com>' }, { dkim: exampleCom, envelope: { from: 'SRS0=HHH=TT=example.com=ops@fwd.example.net', to: [to] } });
    // SPF-aligned: sent by spf.example.org's own server (127.0.0.1).
    await send({ from: 'desk@spf.example.org', to, subject: 'SPF aligned', text: 'ok', messageId: '<as-2@spf.example.org>' }, { envelope: { from: 'desk@spf.example.org', to: [to] } });
    // The same From: from a server SPF does not list, unsigned: not authenticated.
    assert.equal(await refusalCode(smtp.port, { from: 'desk@spf.example.org', to, subject: 'x', text: 'x' }, { envelope: { from: 'desk@spf.example.org', to: [to] }, localAddress: '127.0.0.3' }), 550);
    // An allowed From: without a signature, and an allowed envelope with a disallowed From:.
    assert.equal(await refusalCode(smtp.port, { from: 'ops@example.com', to, subject: 'x', text: 'x' }), 550);
    assert.equal(await refusalCode(smtp.port, { from: 'someone@evil.example.net', to, subject: 'x', text: 'x' }, { dkim: other, envelope: { from: 'ops@example.com', to: [to] } }), 550);
    await smtp.drain();
    for (const ref of ['<as-1@example.com>', '<as-2@spf.example.org>']) assert.equal((await w.tickets(live(), `?source_ref=${encodeURIComponent(`email:${ref}`)}`)).length, 1, ref);
  });

  test('a DNS outage where authentication decides answers 451 (the sender tries again), not a refusal or an unverified reply', async () => {
    const flaky = dns.dkim('flaky.example.org');
    dns.fail('flaky.example.org');
    const strict = await w.integration(undefined, { allowed_senders: ['flaky.example.org'] });
    assert.equal(await refusalCode(smtp.port, { from: 'ops@flaky.example.org', to: strict.email_address!, subject: 'x', text: 'x' }, { dkim: flaky }), 451);
    // A sender the list refuses anyway is refused for good.
    assert.equal(await refusalCode(smtp.port, { from: 'ops@elsewhere.example.net', to: strict.email_address!, subject: 'x', text: 'x' }), 550);
  });

  test('a trusted forwarder vouches with its ARC seal for mail whose own authentication forwarding broke', async () => {
    const strict = await w.integration(undefined, { allowed_senders: ['plain.example.org'] });
    const to = strict.email_address!;
    // The original message as plain.example.org's server (192.0.2.10, in its SPF) sent it to the forwarder.
    const original = await new Promise<Buffer>((resolve, reject) => {
      nodemailer.createTransport({ streamTransport: true, buffer: true }).sendMail({ from: 'help@plain.example.org', to: 'support@customer.example', subject: 'Through a forwarder', text: 'ok', messageId: '<arc-1@plain.example.org>' }, (err, info) => (err ? reject(err) : resolve(info.message as Buffer)));
    });
    // The forwarder checks it (SPF passes there), seals it (ARC) and passes it on with an SRS envelope.
    const sealed = await authenticate(original, { ip: '192.0.2.10', helo: 'mail.plain.example.org', sender: 'help@plain.example.org', mta: 'fwd.example.net', resolver: dns.resolver, seal: { signingDomain: 'fwd.example.net', selector: 'arc', privateKey: forwarder.privateKey } });
    assert.match(sealed.headers, /ARC-Seal:/);
    const envelope = { from: 'SRS0=abc=TT=plain.example.org=help@fwd.example.net', to: [to] };
    await send({ raw: Buffer.concat([Buffer.from(sealed.headers), original]) }, { envelope });
    // Without the seal the same message is not authenticated here (SPF was the forwarder's, not ours).
    assert.equal(await refusalCode(smtp.port, { raw: original }, { envelope }), 550);
    await smtp.drain();
    assert.equal((await w.tickets(live(), `?source_ref=${encodeURIComponent('email:<arc-1@plain.example.org>')}`)).length, 1);
    const rows = await t.ctx.db.selectFrom('inbound_emails').select(['authenticated', 'auth']).where('message_id', '=', '<arc-1@plain.example.org>').execute();
    assert.deepEqual(rows.map((r) => r.authenticated), [1]);
    assert.match(rows[0]!.auth ?? '', /trusted forwarder fwd\.example\.net/);
  });
});
