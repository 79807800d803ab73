import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv } from 'ajv';
import type nodemailer from 'nodemailer';
import sharp from 'sharp';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { integrationsWorld, type CreatedIntegration, type IntegrationsWorld } from '../../../test/world.js';
import { mailDns, sendTo, type DkimKey, type SendOptions } from '../../../test/mail-kit.js';
import { startSmtp, type Mail, type SmtpPeer } from '../../../test/peers.js';
import { connectSse, listen, type SseClient } from '../../../test/sse-client.js';
import { processDue, type Senders } from '../deliveries/worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';
import { IncidentStreamEvent, SignalStreamEvent } from '../streams/catalog.js';
import { processInbound, processPending } from './inbound.service.js';
import { startInboundSmtp, type InboundListener } from './smtp-listener.js';

// Issue 32 ("Mail") and issue 31 F7, with what real clients send: a forwarder's SRS envelope,
// Reply-To, vacation responders (Auto-Submitted), newsletters (Precedence, List-Id,
// List-Unsubscribe), bounces (MAIL FROM:<>), NUL bytes. Every message goes through the real SMTP
// listener; Muster's own mail goes out through the delivery worker to a real SMTP server.
// The streams' documented event schemas (what generated clients check).
const ajv = new Ajv({ strict: false, validateFormats: false });
const validIncidentEvent = ajv.compile(IncidentStreamEvent);
const validSignalEvent = ajv.compile(SignalStreamEvent);

describe('mail from real clients', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let smtp: InboundListener;
  let outgoing: SmtpPeer;
  let senders: Senders;
  let port: number;
  let i: CreatedIntegration;
  let exampleCom: DkimKey;
  const dns = mailDns();
  const streams: SseClient[] = [];
  const live = () => ({ 'x-api-key': w.liveKey });

  before(async () => {
    outgoing = await startSmtp();
    t = await buildTestApp({ INBOUND_EMAIL_DOMAIN: 'in.muster.test', INBOUND_SMTP_PORT: '0', INBOUND_SMTP_HOST: '127.0.0.1', SMTP_URL: outgoing.url, SSE_HEARTBEAT_MS: '1000' });
    w = await integrationsWorld(t);
    exampleCom = dns.dkim('example.com');
    smtp = await startInboundSmtp(t.ctx, { resolver: dns.resolver });
    senders = createSenders(t.ctx);
    port = await listen(t);
    i = await w.integration();
    await deliver();
  });
  after(async () => {
    await Promise.all(streams.map((s) => s.close()));
    await smtp.close();
    await t.close();
    await outgoing.close();
  });

  const send = (mail: nodemailer.SendMailOptions, o?: SendOptions) => sendTo(smtp.port, mail, o);
  /** Sends what the outbox holds and answers what the SMTP server received meanwhile. */
  async function deliver(): Promise<Mail[]> {
    const before = outgoing.messages.length;
    while ((await processDue(t.ctx, senders)) > 0);
    return outgoing.messages.slice(before);
  }
  const ticketOf = async (messageId: string) => (await w.tickets(live(), `?source_ref=${encodeURIComponent(`email:${messageId}`)}`))[0];
  const outboxTo = (recipient: string) => t.ctx.db.selectFrom('outbox').select(['topic', 'payload', 'status']).where('recipient', '=', recipient).orderBy('id').execute();
  async function replies(id: number) {
    return (await w.call(live(), 'GET', `/v1/tickets/${id}/replies`)).json<{ replies: { body: string; public: boolean; author_id: number | null }[] }>().replies;
  }
  async function stream(path: string): Promise<SseClient> {
    const s = await connectSse(port, path, live());
    streams.push(s);
    await s.waitForEvent('connected');
    return s;
  }

  test('forwarded mail (SRS envelope): the reporter is From: (or Reply-To:), acknowledged there, and their reply by the same forwarder is accepted', async () => {
    const srs = (local: string) => `SRS0=Hq2z=TT=example.org=${local}@fwd.example.net`;
    await send({ from: 'Rita Reporter <rita@example.org>', to: i.email_address!, subject: 'Gate stuck open', text: 'North gate.', messageId: '<srs-1@example.org>' }, { envelope: { from: srs('rita'), to: [i.email_address!] } });
    await send({ from: 'Sam <sam@example.org>', replyTo: 'desk@example.org', to: i.email_address!, subject: 'Light out', text: 'Hall B.', messageId: '<srs-2@example.org>' }, { envelope: { from: srs('sam'), to: [i.email_address!] } });
    await smtp.drain();
    const acks = await t.ctx.db.selectFrom('outbox').select('recipient').where('topic', '=', 'incident.email_received').execute();
    assert.ok(acks.some((a) => a.recipient === 'rita@example.org'), 'acknowledged to From:');
    assert.ok(acks.some((a) => a.recipient === 'desk@example.org'), 'acknowledged to Reply-To:');
    assert.ok(!acks.some((a) => a.recipient.includes('fwd.example.net')), 'never to the SRS envelope');
    const ticket = await ticketOf('<srs-1@example.org>');
    const [ack] = await outboxTo('rita@example.org');
    const replyTo = (JSON.parse(ack!.payload) as { reply_to: string }).reply_to;
    // Rita answers; her provider forwards it again with a fresh SRS envelope.
    await send({ from: 'Rita Reporter <rita@example.org>', to: replyTo, subject: 'Re: Gate stuck open', text: 'Still open.', messageId: '<srs-3@example.org>' }, { envelope: { from: srs('rita'), to: [replyTo] } });
    await smtp.drain();
    assert.deepEqual((await replies(ticket!.Id)).map((r) => [r.body, r.public, r.author_id]), [['Still open.', true, null]]);
  });

  test('RFC 3834: a vacation reply, a newsletter and a bounce open nothing, post nothing, get no answer, and are listed as ignored with why', async () => {
    await send({ from: 'vic@example.org', to: i.email_address!, subject: 'Pump noise', text: 'Loud.', messageId: '<oof-0@example.org>' });
    await smtp.drain();
    const ticket = await ticketOf('<oof-0@example.org>');
    const ack = (await outboxTo('vic@example.org'))[0]!;
    const replyTo = (JSON.parse(ack.payload) as { reply_to: string }).reply_to;
    const before = (await t.ctx.db.selectFrom('outbox').select('id').orderBy('id', 'desc').executeTakeFirst())?.id ?? 0;

    // Gmail's vacation responder answering Muster's acknowledgement.
    await send({ from: 'vic@example.org', to: replyTo, subject: 'Out of office: [#1] Pump noise', text: 'I am away until Monday.', headers: { 'Auto-Submitted': 'auto-replied' } });
    // A newsletter (Mailchimp-style headers) sent to the integration's address.
    await send(
      { from: 'news@lists.example.org', to: i.email_address!, subject: 'Our October newsletter', text: 'News.', messageId: '<news-1@lists.example.org>', headers: { Precedence: 'bulk', 'List-Id': 'Example News <news.lists.example.org>', 'List-Unsubscribe': '<mailto:unsubscribe@lists.example.org>' } },
    );
    // A list that says only List-Unsubscribe.
    await send({ from: 'promo@shop.example.org', to: i.email_address!, subject: 'Sale', text: 'Sale.', messageId: '<promo-1@shop.example.org>', headers: { 'List-Unsubscribe': '<https://shop.example.org/u>' } });
    // A bounce: empty return path, a delivery status report.
    const bounce = [
      'From: Mail Delivery Subsystem <mailer-daemon@mx.example.org>',
      `To: ${i.email_address!}`,
      'Subject: Undelivered Mail Returned to Sender',
      'Message-ID: <bounce-1@mx.example.org>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
      '',
      '--b1',
      'Content-Type: text/plain',
      '',
      'Your message could not be delivered.',
      '--b1',
      'Content-Type: message/delivery-status',
      '',
      'Reporting-MTA: dns; mx.example.org',
      '',
      'Final-Recipient: rfc822; nobody@example.org',
      'Action: failed',
      'Status: 5.1.1',
      '--b1--',
      '',
    ].join('\r\n');
    await send({ raw: bounce }, { envelope: { from: '', to: [i.email_address!] } });
    await smtp.drain();

    assert.deepEqual(await replies(ticket!.Id), [], 'the vacation reply is no reply');
    for (const ref of ['<news-1@lists.example.org>', '<promo-1@shop.example.org>', '<bounce-1@mx.example.org>']) assert.equal(await ticketOf(ref), undefined, `${ref} opened nothing`);
    const queued = await t.ctx.db.selectFrom('outbox').select(['recipient', 'topic']).where('id', '>', before).execute();
    assert.deepEqual(queued, [], 'nothing was answered');

    const listed = await w.call(live(), 'GET', '/v1/inbound-emails?status=ignored');
    assert.equal(listed.statusCode, 200, listed.body);
    const ignored = listed.json<{ inbound_emails: { from: string | null; error: string; envelope_from: string; incident_id: number | null }[] }>().inbound_emails;
    assert.deepEqual(ignored.map((m) => [m.from, m.error]).sort(), [
      ['mailer-daemon@mx.example.org', 'bounce (empty return path, MAIL FROM:<>)'],
      ['news@lists.example.org', 'bulk (Precedence: bulk)'],
      ['promo@shop.example.org', 'mailing list (List-Unsubscribe)'],
      ['vic@example.org', 'automatic (Auto-Submitted: auto-replied)'],
    ]);
    assert.equal(ignored.find((m) => m.from === 'vic@example.org')!.incident_id, ticket!.Id);
  });

  test("Muster's own mail: unique Message-IDs under its domain, Auto-Submitted, and threaded under the reporter's messages", async () => {
    await send({ from: 'tess@example.org', to: i.email_address!, subject: 'Broken window', text: 'Room 4.', messageId: '<thread-1@example.org>' });
    await smtp.drain();
    const ticket = await ticketOf('<thread-1@example.org>');
    const [ackMail] = (await deliver()).filter((m) => m.envelope.to.includes('tess@example.org'));
    assert.ok(ackMail, 'the acknowledgement went out');
    assert.equal(ackMail.header('auto-submitted'), 'auto-replied');
    assert.equal(ackMail.header('in-reply-to'), '<thread-1@example.org>');
    assert.equal(ackMail.header('references'), '<thread-1@example.org>');
    assert.match(ackMail.header('message-id') ?? '', /^<[0-9a-f-]{36}@muster\.test>$/);

    // Tess answers the acknowledgement; then the team answers publicly, and the email threads under both.
    await send({ from: 'tess@example.org', to: ackMail.header('reply-to')!, subject: 'Re: Broken window', text: 'It is raining in.', messageId: '<thread-2@example.org>', inReplyTo: ackMail.header('message-id')! });
    await smtp.drain();
    const res = await w.call(live(), 'POST', `/v1/incidents/${ticket!.Id}/replies`, { body: 'Glazier on the way.', public: true });
    assert.equal(res.statusCode, 201, res.body);
    const [teamMail] = (await deliver()).filter((m) => m.envelope.to.includes('tess@example.org'));
    assert.ok(teamMail, 'the public reply was emailed');
    assert.equal(teamMail.header('auto-submitted'), undefined, 'a person wrote it');
    assert.equal(teamMail.header('in-reply-to'), '<thread-2@example.org>');
    assert.equal(teamMail.header('references'), '<thread-1@example.org> <thread-2@example.org>');
    assert.notEqual(teamMail.header('message-id'), ackMail.header('message-id'));

    // Automatic mail of every kind says so (a magic code here).
    await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: w.member.email } });
    const [code] = (await deliver()).filter((m) => m.envelope.to.includes(w.member.email));
    assert.equal(code?.header('auto-submitted'), 'auto-generated');
  });

  test('an image attached to a mail reaches the signal stream as signal.capture and the incident timeline, as an API capture does', async () => {
    const signals = await stream('/v1/signals/stream');
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#0a0' } }).png().toBuffer();
    await send({ from: 'una@example.org', to: i.email_address!, subject: 'Fallen tree', text: 'See photo.', messageId: '<photo-1@example.org>', attachments: [{ filename: 'tree.png', content: png, contentType: 'image/png' }] });
    await smtp.drain();
    const ticket = await ticketOf('<photo-1@example.org>');
    const frame = await signals.waitForEvent('signal.capture', (p) => p.ticket_id === ticket!.Id);
    assert.ok(validSignalEvent(frame.data), `schema-valid: ${JSON.stringify(validSignalEvent.errors)}`);
    const capture = (frame.data as { payload: { image_url: string; note: string } }).payload;
    assert.equal(capture.note, 'tree.png');
    const onTimeline = (await w.timelineTypes(ticket!.Id)).filter((e) => e.type === 'signal');
    assert.deepEqual(onTimeline.map((e) => [e.data.signal_type, e.data.image_url]), [['capture', capture.image_url]]);
  });

  test('email replies on the incident stream carry author_name, as the stream schema requires and the REST answer has it', async () => {
    const incidents = await stream('/v1/incidents/stream');
    await send({ from: 'vera@example.org', to: i.email_address!, subject: 'Leak', text: 'Basement.', messageId: '<stream-1@example.org>' });
    await smtp.drain();
    const ticket = await ticketOf('<stream-1@example.org>');
    const replyTo = (JSON.parse((await outboxTo('vera@example.org'))[0]!.payload) as { reply_to: string }).reply_to;
    await send({ from: 'vera@example.org', to: replyTo, subject: 'Re: Leak', text: 'Getting worse.' });
    await send({ from: w.member.email, to: replyTo, subject: 'Re: Leak', text: 'Plumber called.' }, { dkim: exampleCom });
    await smtp.drain();
    const frames = await Promise.all(['Getting worse.', 'Plumber called.'].map((b) => incidents.waitForEvent('incident.reply', (p) => p.body === b)));
    for (const f of frames) assert.ok(validIncidentEvent(f.data), `schema-valid: ${JSON.stringify(f.data)} ${JSON.stringify(validIncidentEvent.errors)}`);
    const rest = await replies(ticket!.Id);
    assert.deepEqual(
      frames.map((f) => (f.data as { payload: { author_name: string | null } }).payload.author_name),
      (rest as unknown as { author_name: string | null }[]).map((r) => r.author_name),
    );
    assert.equal((frames[1]!.data as { payload: { author_name: string } }).payload.author_name, w.member.name);
  });

  test('F7: NUL in the body and in an encoded subject is stripped and the incident opens, on both databases', async () => {
    const raw = Buffer.concat([
      Buffer.from(['From: nul@example.org', `To: ${i.email_address!}`, 'Subject: =?utf-8?Q?a=00b?=', 'Message-ID: <nul-1@example.org>', 'Content-Type: text/plain; charset=utf-8', '', 'before'].join('\r\n')),
      Buffer.from([0]),
      Buffer.from('after\r\n'),
    ]);
    await send({ raw }, { envelope: { from: 'nul@example.org', to: [i.email_address!] } });
    await smtp.drain();
    const ticket = await ticketOf('<nul-1@example.org>');
    assert.ok(ticket, 'the incident opened');
    assert.equal(ticket.title, 'ab');
    assert.equal(ticket.description, 'beforeafter');
    const [row] = await t.ctx.db.selectFrom('inbound_emails').select(['status', 'error']).where('message_id', '=', '<nul-1@example.org>').execute();
    assert.deepEqual(row, { status: 'processed', error: null });
  });

  test('two processors of one stored message (two instances) open one incident, one capture and one acknowledgement', async () => {
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#00a' } }).png().toBuffer();
    await send({ from: 'rae@example.org', to: i.email_address!, subject: 'Two at once', text: 'x', messageId: '<race-0@example.org>', attachments: [{ filename: 'r.png', content: png, contentType: 'image/png' }] });
    await smtp.drain();
    // The same message stored again, pending (as after a crash), then taken by two processors at once.
    const row = await t.ctx.db.selectFrom('inbound_emails').selectAll().where('message_id', '=', '<race-0@example.org>').executeTakeFirstOrThrow();
    const { id: _id, ...copy } = row;
    const id = (await t.ctx.db.insertInto('inbound_emails').values({ ...copy, message_id: '<race-1@example.org>', status: 'pending', incident_id: null, processed_at: null, answer_to: 'rae-copy@example.org' }).returning('id').executeTakeFirstOrThrow()).id;
    await Promise.all([processInbound(t.ctx, id), processInbound(t.ctx, id)]);
    const ticket = await ticketOf('<race-1@example.org>');
    assert.ok(ticket);
    assert.equal((await w.tickets(live(), `?source_ref=${encodeURIComponent('email:<race-1@example.org>')}`)).length, 1);
    const captures = (await w.call(live(), 'GET', '/v1/signals?type=capture')).json<{ signals: { ticket_id: number }[] }>().signals.filter((c) => c.ticket_id === ticket.Id);
    assert.equal(captures.length, 1);
    assert.equal((await outboxTo('rae-copy@example.org')).length, 1);
    const done = await t.ctx.db.selectFrom('inbound_emails').select(['status', 'incident_id']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(done, { status: 'processed', incident_id: ticket.Id });
  });

  test('a message that cannot be processed stays listed for the org admins with its error (never dropped silently)', async () => {
    await send({ from: 'xena@example.org', to: i.email_address!, subject: 'Orphan', text: 'x', messageId: '<orphan-1@example.org>' });
    // Its integration row disappears before it is processed (the processor then has nowhere to put it).
    const [row] = await t.ctx.db.selectFrom('inbound_emails').select('id').where('message_id', '=', '<orphan-1@example.org>').execute();
    await smtp.drain();
    await t.ctx.db.updateTable('inbound_emails').set({ status: 'pending', integration_id: null, incident_id: null, attempts: 0 }).where('id', '=', row!.id).execute();
    for (let n = 0; n < 3; n += 1) await processPending(t.ctx);
    const failed = (await w.call(live(), 'GET', `/v1/inbound-emails?status=failed&org_id=${i.org_id}`)).json<{ inbound_emails: { id: number; error: string; attempts: number; subject: string }[] }>().inbound_emails;
    assert.deepEqual(failed.map((m) => [m.id, m.error, m.attempts, m.subject]), [[row!.id, 'the integration was deleted', 3, 'Orphan']]);
    // Members who are not admins see nothing; another org's admin neither.
    const asMember = await w.call({ cookie: w.member.cookie }, 'GET', '/v1/inbound-emails');
    assert.deepEqual(asMember.json<{ inbound_emails: unknown[] }>().inbound_emails, []);
    assert.equal((await w.call({ cookie: w.member.cookie }, 'GET', `/v1/inbound-emails?org_id=${i.org_id}`)).statusCode, 403);
    // A test key sees the test mode's mail only.
    assert.deepEqual((await w.call({ 'x-api-key': w.testKey }, 'GET', '/v1/inbound-emails')).json<{ inbound_emails: unknown[] }>().inbound_emails, []);
  });
});
