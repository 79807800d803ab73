import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type nodemailer from 'nodemailer';
import { DAY } from '../../lib/clock.js';
import { buildTestApp, type TestApp } from '../../../test/helpers.js';
import { integrationsWorld, type CreatedIntegration, type IntegrationsWorld } from '../../../test/world.js';
import { mailDns, sendTo, type SendOptions } from '../../../test/mail-kit.js';
import { sweepRetention } from '../retention/retention.service.js';
import { startInboundSmtp, type InboundListener } from './smtp-listener.js';

// Issue 31 F8: the raw messages Muster received (`inbound_emails.raw`, attachments and all) go with
// their incident, under retention, and are part of a person's export when they sent them.
describe('received mail as personal data', () => {
  let t: TestApp;
  let w: IntegrationsWorld;
  let smtp: InboundListener;
  let i: CreatedIntegration;
  let slug: string;
  const live = () => ({ 'x-api-key': w.liveKey });

  before(async () => {
    t = await buildTestApp({ INBOUND_EMAIL_DOMAIN: 'in.muster.test', INBOUND_SMTP_PORT: '0', INBOUND_SMTP_HOST: '127.0.0.1' });
    w = await integrationsWorld(t);
    smtp = await startInboundSmtp(t.ctx, { resolver: mailDns().resolver });
    i = await w.integration();
    slug = w.owner.slug;
  });
  after(async () => {
    await smtp.close();
    await t.close();
  });

  const send = (mail: nodemailer.SendMailOptions, o?: SendOptions) => sendTo(smtp.port, mail, o);
  const rowsOf = (ids: string[]) => t.ctx.db.selectFrom('inbound_emails').select(['message_id', 'status', 'raw', 'raw_removed_at']).where('message_id', 'in', ids).orderBy('id').execute();
  const retention = async (r: Record<string, number | null>) => {
    const res = await w.call(live(), 'PATCH', `/v1/orgs/${slug}`, { retention: r });
    assert.equal(res.statusCode, 200, res.body);
  };

  /** A report, the reporter's reply and a vacation reply, all by mail; answers the incident and the three Message-IDs. */
  async function thread(tag: string) {
    const ids = [`<${tag}-1@example.org>`, `<${tag}-2@example.org>`, `<${tag}-3@example.org>`];
    await send({ from: `${tag}@example.org`, to: i.email_address!, subject: `Report ${tag}`, text: 'Help.', messageId: ids[0]! });
    await smtp.drain();
    const [ticket] = await w.tickets(live(), `?source_ref=${encodeURIComponent(`email:${ids[0]!}`)}`);
    const ack = await t.ctx.db.selectFrom('outbox').select('payload').where('recipient', '=', `${tag}@example.org`).executeTakeFirstOrThrow();
    const replyTo = (JSON.parse(ack.payload) as { reply_to: string }).reply_to;
    await send({ from: `${tag}@example.org`, to: replyTo, subject: 'Re', text: 'More.', messageId: ids[1]! });
    await send({ from: `${tag}@example.org`, to: replyTo, subject: 'Away', text: 'Away.', messageId: ids[2]!, headers: { 'Auto-Submitted': 'auto-replied' } });
    await smtp.drain();
    assert.deepEqual((await rowsOf(ids)).map((r) => r.status), ['processed', 'processed', 'ignored']);
    return { id: ticket!.Id, ids, replyTo };
  }

  test("a person's export holds the mail they sent from their proven address, as received; nobody else's", async () => {
    await send({ from: w.member.email, to: i.email_address!, subject: 'Sent by the member', text: 'Mine.', messageId: '<export-1@example.com>' });
    await send({ from: 'someone-else@example.com', to: i.email_address!, subject: 'Not theirs', text: 'x', messageId: '<export-2@example.com>' });
    await smtp.drain();
    const exported = await w.call({ cookie: w.member.cookie }, 'GET', '/v1/auth/me/export');
    assert.equal(exported.statusCode, 200, exported.body);
    const mails = exported.json<{ inbound_emails: { message_id: string; subject: string; raw_base64: string | null; livemode: boolean }[] }>().inbound_emails;
    assert.deepEqual(mails.map((m) => [m.message_id, m.subject, m.livemode]), [['<export-1@example.com>', 'Sent by the member', true]]);
    assert.match(Buffer.from(mails[0]!.raw_base64!, 'base64').toString('utf8'), /^Subject: Sent by the member\r$/m);
    const owners = (await w.call({ cookie: w.owner.cookie }, 'GET', '/v1/auth/me/export')).json<{ inbound_emails: unknown[] }>().inbound_emails;
    assert.deepEqual(owners, []);
  });

  test('deleting an incident deletes the mail that opened it, answered it, and was kept beside it', async () => {
    const { id, ids } = await thread('del');
    const res = await w.call(live(), 'DELETE', `/v1/tickets/${id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(await rowsOf(ids), []);
  });

  test('closed-incident retention takes the mail with the incident', async () => {
    const { id, ids } = await thread('closed');
    assert.equal((await w.call(live(), 'PATCH', `/v1/tickets/${id}`, { status: 'resolved' })).statusCode, 200);
    await retention({ closed_incidents_days: 1 });
    t.clock.advance(2 * DAY);
    assert.equal((await sweepRetention(t.ctx)).closed_incidents, 1);
    assert.deepEqual(await rowsOf(ids), []);
    await retention({ closed_incidents_days: null });
  });

  test('inbound_emails_days (and uploads_days): the message goes, the record of what it opened stays and still serves', async () => {
    const { id, ids, replyTo } = await thread('aged');
    await send({ from: 'stranger@example.net', to: i.email_address!, subject: 'Newsletter', text: 'x', messageId: '<aged-news@example.net>', headers: { 'List-Id': '<news.example.net>' } });
    await smtp.drain();
    await retention({ inbound_emails_days: 30 });
    t.clock.advance(29 * DAY);
    await sweepRetention(t.ctx);
    const inside = await rowsOf([...ids, '<aged-news@example.net>']);
    assert.deepEqual(inside.map((r) => r.raw_removed_at), [null, null, null, null], 'inside the window nothing goes');
    assert.ok(inside.every((r) => r.raw.length > 0));
    t.clock.advance(2 * DAY);
    // Two sweepers at once (two instances): each message is removed and counted once.
    const due = await t.ctx.db.selectFrom('inbound_emails').select('id').where('status', '<>', 'pending').where('raw_removed_at', 'is', null).where('created_at', '<', new Date(t.clock.now().getTime() - 30 * DAY).toISOString()).execute();
    assert.ok(due.length >= 4);
    const [a, b] = await Promise.all([sweepRetention(t.ctx), sweepRetention(t.ctx)]);
    assert.equal(a.inbound_emails + b.inbound_emails, due.length);
    const left = await rowsOf([...ids, '<aged-news@example.net>']);
    assert.deepEqual(left.map((r) => [r.message_id, r.status, r.raw, r.raw_removed_at !== null]), [
      [ids[0], 'processed', '', true],
      [ids[1], 'processed', '', true],
    ]);
    const listed = (await w.call(live(), 'GET', '/v1/inbound-emails?status=processed')).json<{ inbound_emails: { message_id: string; size: number; raw_removed_at: string | null }[] }>().inbound_emails;
    assert.deepEqual(listed.filter((m) => ids.includes(m.message_id)).map((m) => m.size), [0, 0]);
    // The reporter is still known: their next reply lands as before.
    await send({ from: 'aged@example.org', to: replyTo, subject: 'Re', text: 'Still there?' });
    await smtp.drain();
    const replies = (await w.call(live(), 'GET', `/v1/tickets/${id}/replies`)).json<{ replies: { body: string; public: boolean }[] }>().replies;
    assert.deepEqual(replies.map((r) => [r.body, r.public]), [['More.', true], ['Still there?', true]]);

    // uploads_days: a message holds its attachments as sent, so it goes by the uploads' window too.
    await retention({ inbound_emails_days: null, uploads_days: 5 });
    await send({ from: 'photo@example.org', to: i.email_address!, subject: 'Photo', text: 'x', messageId: '<aged-photo@example.org>' });
    await smtp.drain();
    t.clock.advance(6 * DAY);
    await sweepRetention(t.ctx);
    assert.deepEqual((await rowsOf(['<aged-photo@example.org>'])).map((r) => [r.raw, r.raw_removed_at !== null]), [['', true]]);
    await retention({ uploads_days: null });
  });

});
