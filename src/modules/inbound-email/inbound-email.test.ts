import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import nodemailer from 'nodemailer';
import sharp from 'sharp';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { integrationsWorld, type CreatedIntegration, type IntegrationsWorld } from '../../../test/world.js';
import { mailDns, type DkimKey } from '../../../test/mail-kit.js';
import { startInboundSmtp, type InboundListener } from './smtp-listener.js';

// Speaks SMTP to the real listener, with nodemailer as the sending client.
describe('inbound email', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let smtp: InboundListener;
  let i: CreatedIntegration;
  let png: Buffer;
  // Members' mail is DKIM-signed by their domain (example.com): only authenticated mail speaks for a member.
  const dns = mailDns();
  let exampleCom: DkimKey;
  const live = () => ({ 'x-api-key': w.liveKey });
  before(async () => {
    t = await buildTestApp({ INBOUND_EMAIL_DOMAIN: 'in.muster.test', INBOUND_SMTP_PORT: '0', INBOUND_SMTP_HOST: '127.0.0.1', INBOUND_MAX_BYTES: '200000' });
    w = await integrationsWorld(t);
    exampleCom = dns.dkim('example.com');
    smtp = await startInboundSmtp(t.ctx, { resolver: dns.resolver });
    i = await w.integration();
    png = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#c00' } }).png().toBuffer();
  });
  after(async () => {
    await smtp.close();
    await t.close();
  });

  async function send(mail: nodemailer.SendMailOptions) {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true });
    try {
      return await transport.sendMail(mail);
    } finally {
      transport.close();
    }
  }
  async function refusal(mail: nodemailer.SendMailOptions): Promise<number | undefined> {
    const err = await send(mail).then(() => undefined, (e: unknown) => e as { responseCode?: number });
    assert.ok(err, 'the message is refused');
    return err.responseCode;
  }
  async function replies(id: number) {
    const res = await w.call(live(), 'GET', `/v1/tickets/${id}/replies`);
    return res.json<{ replies: { body: string; public: boolean; author_id: number | null }[] }>().replies;
  }

  test('new mail opens an incident with its image attachment, and the reporter is told with a reply address', async () => {
    await send({ from: 'caller@example.org', to: i.email_address!, subject: 'Water leaking in plant room', text: 'The valve on level 2 drips.\n\n-- \nCaller', messageId: '<first-1@example.org>', attachments: [{ filename: 'leak.png', content: png, contentType: 'image/png' }] });
    await smtp.drain();
    const [ticket] = await w.tickets(live(), `?source_ref=${encodeURIComponent('email:<first-1@example.org>')}`);
    assert.ok(ticket, 'an incident was opened');
    assert.equal(ticket.title, 'Water leaking in plant room');
    assert.equal(ticket.source, 'email');
    assert.match(ticket.description ?? '', /The valve on level 2 drips\./);
    const signals = await w.call(live(), 'GET', '/v1/signals?type=capture');
    const captures = signals.json<{ signals: { ticket_id: number; image_url: string }[] }>().signals.filter((s) => s.ticket_id === ticket.Id);
    assert.equal(captures.length, 1);
    const image = await t.app.inject({ url: new URL(captures[0]!.image_url).pathname });
    assert.equal(image.statusCode, 200);
    const note = await t.ctx.db.selectFrom('outbox').selectAll().where('topic', '=', 'incident.email_received').executeTakeFirstOrThrow();
    assert.equal(note.recipient, 'caller@example.org');
    assert.match((JSON.parse(note.payload) as { reply_to: string }).reply_to, /^reply\+\d+-[0-9a-f]{20}@in\.muster\.test$/);
  });

  test("a reply to Muster's email lands on the incident: public from the reporter, internal from a member, quotes cut", async () => {
    await send({ from: 'caller@example.org', to: i.email_address!, subject: 'Lift stuck', text: 'Between floors 3 and 4.', messageId: '<lift-1@example.org>' });
    await smtp.drain();
    const [ticket] = await w.tickets(live(), `?source_ref=${encodeURIComponent('email:<lift-1@example.org>')}`);
    const outbox = await t.ctx.db.selectFrom('outbox').select('payload').where('topic', '=', 'incident.email_received').where('recipient', '=', 'caller@example.org').orderBy('id', 'desc').executeTakeFirstOrThrow();
    const replyTo = (JSON.parse(outbox.payload) as { reply_to: string }).reply_to;
    await send({ from: 'caller@example.org', to: replyTo, subject: `Re: [#${ticket!.Id}] Lift stuck`, text: 'Someone is inside now.\n\nOn Mon, 23 Nov 2026 at 10:00, Muster <no-reply@localhost> wrote:\n> We received your report.\n' });
    await send({ from: w.member.email, to: replyTo, subject: 'Re: Lift stuck', text: 'Technician on the way.\n\nSent from my phone', dkim: exampleCom });
    await smtp.drain();
    assert.deepEqual((await replies(ticket!.Id)).map((r) => [r.body, r.public, r.author_id]), [
      ['Someone is inside now.', true, null],
      ['Technician on the way.', false, w.member.id],
    ]);
    assert.equal(await refusal({ from: 'stranger@example.net', to: replyTo, subject: 'Re', text: 'x' }), 550);
    assert.equal(await refusal({ from: 'caller@example.org', to: replyTo.replace(/-[0-9a-f]{4}/, '-0000'), subject: 'Re', text: 'x' }), 550);
  });

  test('a public reply from the team is emailed to the reporter, with the reply address and the status page; internal replies are not', async () => {
    await send({ from: 'tenant@example.org', to: i.email_address!, subject: 'Door will not lock', text: 'Back door, ground floor.', messageId: '<door-1@example.org>' });
    await smtp.drain();
    const [ticket] = await w.tickets(live(), `?source_ref=${encodeURIComponent('email:<door-1@example.org>')}`);
    const mails = () => t.ctx.db.selectFrom('outbox').select(['recipient', 'payload']).where('topic', '=', 'incident.reply').where('recipient', '=', 'tenant@example.org').orderBy('id').execute();
    const internal = await w.call(live(), 'POST', `/v1/incidents/${ticket!.Id}/replies`, { body: 'Locksmith booked for 3 pm.' });
    assert.equal(internal.statusCode, 201, internal.body);
    assert.deepEqual(await mails(), [], 'an internal reply stays inside');
    const pub = await w.call(live(), 'POST', `/v1/incidents/${ticket!.Id}/replies`, { body: 'A locksmith comes at 3 pm today.', public: true });
    assert.equal(pub.statusCode, 201, pub.body);
    const sent = await mails();
    assert.equal(sent.length, 1);
    const mail = JSON.parse(sent[0]!.payload) as { subject: string; text: string; reply_to: string };
    assert.equal(mail.subject, `[#${ticket!.Id}] Re: Door will not lock`);
    assert.match(mail.text, /replied to incident #\d+:\n\nA locksmith comes at 3 pm today\.\n\nReply to this email to add to it\./);
    const view = (await w.call(live(), 'GET', `/v1/tickets/${ticket!.Id}`)).json<{ customer_status_url: string }>();
    assert.ok(mail.text.includes(view.customer_status_url), mail.text);
    assert.match(mail.reply_to, /^reply\+\d+-[0-9a-f]{20}@in\.muster\.test$/);
    // The reporter's own answer to it lands as a public reply and is not mailed back to them.
    await send({ from: 'tenant@example.org', to: mail.reply_to, subject: mail.subject, text: 'Thank you, I will be home.' });
    await smtp.drain();
    assert.deepEqual((await replies(ticket!.Id)).map((r) => [r.body, r.public]), [
      ['Locksmith booked for 3 pm.', false],
      ['A locksmith comes at 3 pm today.', true],
      ['Thank you, I will be home.', true],
    ]);
    assert.equal((await mails()).length, 1);
  });

  test('a message of the same thread repeats the open incident instead of opening another', async () => {
    await send({ from: 'caller@example.org', to: i.email_address!, subject: 'Boiler out', text: 'No heat.', messageId: '<boiler-1@example.org>' });
    await send({ from: 'caller@example.org', to: i.email_address!, subject: 'Re: Boiler out', text: 'Still no heat.', messageId: '<boiler-2@example.org>', references: ['<boiler-1@example.org>'], inReplyTo: '<boiler-1@example.org>' });
    await smtp.drain();
    const tickets = await w.tickets(live(), `?source_ref=${encodeURIComponent('email:<boiler-1@example.org>')}`);
    assert.equal(tickets.length, 1);
    assert.deepEqual((await w.timelineTypes(tickets[0]!.Id)).map((e) => e.type), ['created', 'alert_repeated']);
  });

  test('unknown recipients 550, disallowed senders 550, revoked addresses 550, oversize 552', async () => {
    assert.equal(await refusal({ from: 'a@example.org', to: 'nobody@in.muster.test', subject: 'x', text: 'x' }), 550);
    assert.equal(await refusal({ from: 'a@example.org', to: 'someone@other.test', subject: 'x', text: 'x' }), 550);
    const strict = await w.integration(undefined, { allowed_senders: ['example.com'] });
    assert.equal(await refusal({ from: 'a@evil.example.org', to: strict.email_address!, subject: 'x', text: 'x' }), 550);
    await send({ from: 'ops@mail.example.com', to: strict.email_address!, subject: 'Allowed sender', text: 'ok', dkim: exampleCom });
    const revoked = await w.integration();
    await w.call(live(), 'DELETE', `/v1/integrations/${revoked.id}`);
    assert.equal(await refusal({ from: 'a@example.org', to: revoked.email_address!, subject: 'x', text: 'x' }), 550);
    const big = Buffer.alloc(250_000, 7);
    assert.equal(await refusal({ from: 'a@example.org', to: i.email_address!, subject: 'big', text: 'x', attachments: [{ filename: 'b.bin', content: big }] }), 552);
    await smtp.drain();
    assert.equal((await w.tickets(live(), '?source_ref=' + encodeURIComponent('email:<none>'))).length, 0);
  });
});
