import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { sweepSla } from '../../jobs/sla-sweeper.js';
import { MINUTE } from '../../lib/clock.js';
import { body, buildTestApp, type TestApp, type Headers } from '../../../test/helpers.js';
import { setPlan, signUp, type TestUser } from '../../../test/factories.js';
import { bookPublic, createEventType, guest, listDeliveries, parseIcs, pathOf, startSmtp, type Booking, type Mail, type SmtpPeer } from '../../../test/peers.js';
import { queueEmail } from './email.js';
import { processDue, type Senders } from './worker.js';
import { createSenders } from '../../jobs/outbox-senders.js';

const MAIL_FROM = 'Muster <m@example.com>';

/** The one calendar invitation of a mail, parsed with ical.js; every .ics part must parse and agree. */
function invitation(mail: Mail) {
  assert.ok(mail.calendars.length >= 1, `"${mail.subject}" carries an .ics part`);
  const parsed = mail.calendars.map((c) => parseIcs(c.text));
  for (const p of parsed.slice(1)) assert.deepEqual(p, parsed[0], 'every .ics part of a mail says the same');
  const cal = parsed[0]!;
  assert.equal(cal.events.length, 1);
  return { cal, event: cal.events[0]!, parts: mail.calendars };
}

function assertInvitationFor(mail: Mail, b: Booking, method: 'REQUEST' | 'CANCEL') {
  const { cal, event, parts } = invitation(mail);
  const alternative = parts.find((p) => p.part.type === 'text/calendar');
  assert.ok(alternative, 'a text/calendar part');
  assert.equal(alternative.part.params.method, method, 'the text/calendar part names its method');
  assert.equal(cal.method, method);
  assert.equal(event.uid, `${b.id}@muster`);
  assert.equal(event.start, b.start_time);
  assert.equal(event.end, b.end_time);
  // A booking waiting for its host is TENTATIVE until confirmed (issue 14, item 13).
  assert.equal(event.status, method === 'CANCEL' ? 'CANCELLED' : b.status === 'pending' ? 'TENTATIVE' : 'CONFIRMED');
  assert.ok(event.attendees.some((a) => a.toLowerCase() === `mailto:${b.attendee_email}`), `the attendee is ${b.attendee_email}`);
  return event;
}

describe('email deliveries through a real SMTP server', () => {
  let smtp: SmtpPeer;
  let t: TestApp;
  let senders: Senders;
  let root: TestUser;
  let host: TestUser;
  const as = (u: TestUser): Headers => ({ cookie: u.cookie });

  before(async () => {
    smtp = await startSmtp();
    t = await buildTestApp({ SMTP_URL: smtp.url, MAIL_FROM });
    senders = createSenders(t.ctx);
    root = await signUp(t.app, { name: 'Root' });
    host = await signUp(t.app, { name: 'Hanna Host' });
    await setPlan(t.app, root.cookie, host.id, 'agency');
    await createEventType(t.app, as(host), { name: 'Consult', slug: 'consult' });
    await createEventType(t.app, as(host), { name: 'Approval', slug: 'approval', requires_confirmation: true });
    // The confirmation emails of the registrations go out first, so each test sees only its own.
    while ((await processDue(t.ctx, senders)) > 0);
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  /** Sends what is due and answers the messages the SMTP server received meanwhile. */
  async function deliver(): Promise<Mail[]> {
    const before = smtp.messages.length;
    while ((await processDue(t.ctx, senders)) > 0);
    return smtp.messages.slice(before);
  }
  const to = (mails: Mail[], address: string) => {
    const found = mails.filter((m) => m.envelope.to.includes(address));
    assert.equal(found.length, 1, `one mail to ${address} (got ${mails.map((m) => `${m.envelope.to.join(',')}: ${m.subject}`).join('; ')})`);
    return found[0]!;
  };
  const manageToken = (b: Booking) => /\/bookings\/manage\/([^?/]+)\?action=cancel$/.exec(b.cancel_url)![1]!;

  test('a confirmed booking: the attendee gets the links in text and HTML and a METHOD:REQUEST invitation; the host is told', async () => {
    const attendee = guest();
    const b = await bookPublic(t.app, t.clock, host.slug, 'consult', attendee);
    assert.equal(b.status, 'confirmed');
    const mails = await deliver();
    assert.equal(mails.length, 2);

    const mail = to(mails, attendee.attendee_email);
    // In the booking's zone, named (UTC here).
    assert.match(mail.subject, /^Confirmed: Consult on \w{3}, \d{1,2} \w{3} \d{4}, \d{2}:\d{2}–\d{2}:\d{2} \(UTC\)$/);
    assert.equal(mail.header('from'), MAIL_FROM);
    assert.equal(mail.envelope.from, 'm@example.com');
    assert.equal(mail.header('to'), attendee.attendee_email);
    // Globally unique under the instance's own domain (MAIL_FROM's), not `<outbox-1@muster>` (issue 32); automatic mail says so.
    assert.match(mail.header('message-id') ?? '', /^<[0-9a-f-]{36}@example\.com>$/);
    assert.equal(mail.header('auto-submitted'), 'auto-generated');
    for (const url of [b.cancel_url, b.reschedule_url]) {
      assert.ok(mail.text.includes(url), `the text has ${url}`);
      assert.ok(mail.html.includes(`href="${url}"`), `the HTML links ${url}`);
    }
    assertInvitationFor(mail, b, 'REQUEST');
    const event = invitation(mail).event;
    assert.equal(event.organizer?.toLowerCase(), `mailto:${host.email}`);
    assert.equal(event.summary, 'Consult with Hanna Host');

    const hostMail = to(mails, host.email);
    assert.match(hostMail.subject, /^New booking: Consult on /);
    assert.ok(hostMail.text.includes(attendee.attendee_email));
    assertInvitationFor(hostMail, b, 'REQUEST');

    const listed = (await listDeliveries(t.app, as(host))).filter((d) => d.kind === 'email' && [attendee.attendee_email, host.email].includes(d.recipient) && d.topic.startsWith('booking.created'));
    assert.deepEqual(listed.map((d) => d.status), ['sent', 'sent']);
  });

  test('a pending booking: the host gets working confirm and decline links; the attendee is told of each outcome', async () => {
    const first = guest();
    const pending = await bookPublic(t.app, t.clock, host.slug, 'approval', first);
    assert.equal(pending.status, 'pending');
    let mails = await deliver();
    assert.match(to(mails, first.attendee_email).subject, /^Request received: Approval on /);
    const request = to(mails, host.email);
    assert.match(request.subject, /^Please confirm: Approval on /);
    const confirmUrl = /Confirm: (\S+)/.exec(request.text)?.[1];
    const declineUrl = /Decline: (\S+)/.exec(request.text)?.[1];
    assert.ok(confirmUrl && declineUrl, request.text);
    assert.match(confirmUrl, /^http:\/\/muster\.test\/v1\/bookings\/[^/]+\/confirm$/);
    assert.match(declineUrl, /^http:\/\/muster\.test\/v1\/bookings\/[^/]+\/decline$/);
    for (const url of [confirmUrl, declineUrl]) assert.ok(request.html.includes(`href="${url}"`), `the HTML links ${url}`);
    assertInvitationFor(request, pending, 'REQUEST');

    // A scanner's plain GET only shows the page; the JSON GET acts.
    const page = await t.app.inject({ method: 'GET', url: pathOf(confirmUrl) });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    const confirmed = await t.app.inject({ method: 'GET', url: pathOf(confirmUrl), headers: { accept: 'application/json' } });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(body<Booking>(confirmed).status, 'confirmed');
    mails = await deliver();
    const outcome = to(mails, first.attendee_email);
    assert.match(outcome.subject, /^Confirmed: Approval on /);
    assert.ok(outcome.text.includes(pending.cancel_url) && outcome.text.includes(pending.reschedule_url));
    assertInvitationFor(outcome, { ...pending, status: 'confirmed' }, 'REQUEST');
    assert.match(to(mails, host.email).subject, /^Confirmed: Approval on /);

    const second = guest();
    const toDecline = await bookPublic(t.app, t.clock, host.slug, 'approval', second);
    mails = await deliver();
    const declineLink = /Decline: (\S+)/.exec(to(mails, host.email).text)![1]!;
    const declined = await t.app.inject({ method: 'GET', url: pathOf(declineLink), headers: { accept: 'application/json' } });
    assert.equal(declined.statusCode, 200, declined.body);
    assert.equal(body<Booking>(declined).status, 'declined');
    mails = await deliver();
    const notice = to(mails, second.attendee_email);
    assert.match(notice.subject, /^Declined: Approval on /);
    assertInvitationFor(notice, toDecline, 'CANCEL');
  });

  test("the attendee's cancel sends METHOD:CANCEL invitations; a reschedule sends the new times with the same UID", async () => {
    const attendee = guest();
    const b = await bookPublic(t.app, t.clock, host.slug, 'consult', attendee);
    await deliver();

    const slots = await t.app.inject({ method: 'GET', url: `/v1/slots/${host.slug}/consult?date=${b.start_time.slice(0, 10)}` });
    const later = body<{ slots: { start_time: string }[] }>(slots).slots.at(-1)!.start_time;
    const moved = await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${manageToken(b)}/reschedule`, payload: { start_time: later } });
    assert.equal(moved.statusCode, 200, moved.body);
    const after = body<Booking>(moved);
    assert.notEqual(after.start_time, b.start_time);
    let mails = await deliver();
    const rescheduled = to(mails, attendee.attendee_email);
    assert.match(rescheduled.subject, /^Rescheduled: Consult, now /);
    assert.ok(rescheduled.text.includes(b.cancel_url) && rescheduled.text.includes(b.reschedule_url));
    const event = assertInvitationFor(rescheduled, after, 'REQUEST');
    assert.equal(event.uid, `${b.id}@muster`, 'the same UID, so calendars move the event');
    assertInvitationFor(to(mails, host.email), after, 'REQUEST');

    const cancelled = await t.app.inject({ method: 'POST', url: `/v1/bookings/manage/${manageToken(b)}/cancel`, payload: { reason: 'Plans changed' } });
    assert.equal(cancelled.statusCode, 200, cancelled.body);
    mails = await deliver();
    const notice = to(mails, attendee.attendee_email);
    assert.match(notice.subject, /^Cancelled: Consult on /);
    assert.match(notice.text, /Reason: Plans changed/);
    assertInvitationFor(notice, after, 'CANCEL');
    const hostNotice = to(mails, host.email);
    assert.match(hostNotice.subject, /^Cancelled: Consult on /);
    assertInvitationFor(hostNotice, after, 'CANCEL');
  });

  test('the host cancelling sends the same cancellation to the attendee', async () => {
    const attendee = guest();
    const b = await bookPublic(t.app, t.clock, host.slug, 'consult', attendee);
    await deliver();
    const res = await t.app.inject({ method: 'DELETE', url: `/v1/bookings/${b.id}`, headers: as(host), payload: {} });
    assert.equal(res.statusCode, 200, res.body);
    assertInvitationFor(to(await deliver(), attendee.attendee_email), b, 'CANCEL');
  });

  test('an org invite reaches the unknown email with its own link', async () => {
    const org = await t.app.inject({ method: 'POST', url: '/v1/orgs', headers: as(host), payload: { name: 'Field Team' } });
    assert.equal(org.statusCode, 201, org.body);
    const slug = body<{ slug: string }>(org).slug;
    const email = `invitee-${process.pid}@example.com`;
    const res = await t.app.inject({ method: 'POST', url: `/v1/orgs/${slug}/members`, headers: as(host), payload: { email, role: 'admin' } });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(body(res), { invited: true, email, role: 'admin' });
    const mail = to(await deliver(), email);
    // It names who invites and to what (issue 33).
    assert.equal(mail.subject, `${host.name} invited you to Field Team on Muster`);
    assert.match(mail.text, new RegExp(`^${host.name} \\(${host.email.replace(/[.+]/g, '\\$&')}\\) invited you to join the organization Field Team on Muster as admin\\.`));
    assert.match(mail.text, /http:\/\/muster\.test\/invites\/[A-Za-z0-9_-]{32}\s/, mail.text);
    assert.match(mail.text, /as admin/);
  });

  test('SLA warning and breach emails reach the creator, once each', async () => {
    const owner = await signUp(t.app, { name: 'Olga Owner' });
    const res = await t.app.inject({ method: 'POST', url: '/v1/tickets', headers: as(owner), payload: { title: 'Pump failure', priority: 'urgent' } });
    assert.equal(res.statusCode, 201, res.body);
    const incident = body<{ Id: number; sla_due_at: string }>(res);
    await deliver();

    t.clock.advance(46 * MINUTE);
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 1, breaches: 0 });
    const warning = to(await deliver(), owner.email);
    assert.equal(warning.subject, `SLA warning: "Pump failure" is due at ${incident.sla_due_at.slice(11, 16)} (UTC)`);
    assert.ok(warning.text.includes(`http://muster.test/app/incidents/${incident.Id}`));

    t.clock.advance(15 * MINUTE);
    assert.deepEqual(await sweepSla(t.ctx), { warnings: 0, breaches: 1 });
    const breach = to(await deliver(), owner.email);
    assert.equal(breach.subject, `SLA breached: "Pump failure" was due at ${incident.sla_due_at.slice(11, 16)} (UTC)`);
    assert.match(breach.text, /Priority: urgent/);

    assert.deepEqual(await sweepSla(t.ctx), { warnings: 0, breaches: 0 });
    assert.equal((await deliver()).length, 0, 'nothing is sent twice');
    const listed = (await listDeliveries(t.app, as(owner))).filter((d) => d.topic.startsWith('incident.sla_'));
    assert.deepEqual(listed.map((d) => [d.topic, d.status]), [['incident.sla_breach', 'sent'], ['incident.sla_warning', 'sent']]);
  });

  test('a magic-link code arrives by email and logs in', async () => {
    const user = await signUp(t.app, { name: 'Mira Magic' });
    await deliver();
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: user.email } });
    assert.equal(res.statusCode, 200);
    const mail = to(await deliver(), user.email);
    const code = /^Your Muster sign-in code: (\d{6})$/.exec(mail.subject)?.[1];
    assert.ok(code, mail.subject);
    assert.ok(mail.text.includes(`http://muster.test/login/magic?email=${encodeURIComponent(user.email)}&code=${code}`), mail.text);
    assert.ok(mail.html.includes(`href="http://muster.test/login/magic?email=${encodeURIComponent(user.email)}&amp;code=${code}"`), 'the HTML link (with & escaped)');
    const login = await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link/verify', payload: { email: user.email, code } });
    assert.equal(login.statusCode, 200, login.body);
    // An unknown address gets the same answer and no email.
    const unknown = await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: `nobody-${process.pid}@example.com` } });
    assert.equal(unknown.statusCode, 200);
    assert.equal((await deliver()).length, 0);
  });

  test('a 5xx SMTP refusal of the recipient fails at once; a 4xx is retried', async () => {
    const attendee = guest('refused');
    smtp.rejectRcpt = (address) => (address === attendee.attendee_email ? { code: 550, message: 'No such mailbox' } : undefined);
    try {
      await bookPublic(t.app, t.clock, host.slug, 'consult', attendee);
      const mails = await deliver();
      assert.equal(mails.filter((m) => m.envelope.to.includes(attendee.attendee_email)).length, 0);
      const d = (await listDeliveries(t.app, as(host))).find((x) => x.recipient === attendee.attendee_email)!;
      assert.equal(d.status, 'failed');
      assert.equal(d.attempts, 1);
      assert.equal(d.attempt_log[0]?.status_code, 550);

      const busy = guest('busy');
      smtp.rejectRcpt = (address) => (address === busy.attendee_email ? { code: 451, message: 'Try again later' } : undefined);
      await bookPublic(t.app, t.clock, host.slug, 'consult', busy);
      await deliver();
      let retried = (await listDeliveries(t.app, as(host))).find((x) => x.recipient === busy.attendee_email)!;
      assert.equal(retried.status, 'pending');
      assert.equal(retried.attempt_log[0]?.status_code, 451);
      smtp.rejectRcpt = () => undefined;
      t.clock.advance(6_000);
      to(await deliver(), busy.attendee_email);
      retried = (await listDeliveries(t.app, as(host))).find((x) => x.recipient === busy.attendee_email)!;
      assert.equal(retried.status, 'sent');
      assert.equal(retried.attempts, 2);
    } finally {
      smtp.rejectRcpt = () => undefined;
    }
  });

  test('an email with no recipient (a bounce\'s empty return path) fails at once, not on retry', async () => {
    // Queued as the acknowledgement of a bounce was before automatic mail was ignored (issue 32).
    await t.ctx.transaction(async (tx) => {
      for (const to of ['', '<>']) await queueEmail(t.ctx, tx, { to, subject: 'We received your report', text: 'x', topic: 'incident.email_received' });
    });
    await deliver();
    const rows = await t.ctx.db.selectFrom('outbox').select(['recipient', 'status', 'attempts']).where('topic', '=', 'incident.email_received').orderBy('id').execute();
    assert.deepEqual(rows, [
      { recipient: '', status: 'failed', attempts: 1 },
      { recipient: '<>', status: 'failed', attempts: 1 },
    ]);
    t.clock.advance(86_400_000);
    await deliver();
    assert.deepEqual((await t.ctx.db.selectFrom('outbox').select('attempts').where('topic', '=', 'incident.email_received').execute()).map((r) => r.attempts), [1, 1]);
  });

  test('every message the server got has a distinct Message-ID and the configured sender', () => {
    const ids = smtp.messages.map((m) => m.header('message-id'));
    assert.equal(new Set(ids).size, ids.length);
    for (const m of smtp.messages) assert.equal(m.header('from'), MAIL_FROM);
  });
});

describe('email without SMTP_URL', () => {
  let t: TestApp;
  const lines: string[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    t = await buildTestApp({}, { log: pino({ level: 'info' }, sink) });
  });
  after(() => t.close());

  test("is recorded as skipped with 'SMTP_URL is not set', kept in the outbox and printed to the log", async () => {
    const user = await signUp(t.app, { name: 'Nora Nosmtp' });
    assert.equal(await processDue(t.ctx, createSenders(t.ctx)), 1, 'the confirmation email of the registration');
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/magic-link', payload: { email: user.email } });
    assert.equal(res.statusCode, 200);
    assert.equal(await processDue(t.ctx, createSenders(t.ctx)), 1);
    const [d] = await listDeliveries(t.app, { cookie: user.cookie });
    assert.ok(d);
    assert.equal(d.kind, 'email');
    assert.equal(d.topic, 'auth.magic_code');
    assert.equal(d.status, 'skipped');
    assert.equal(d.last_error, 'SMTP_URL is not set');
    assert.equal(d.attempts, 1);
    assert.deepEqual(d.attempt_log.map((a) => [a.outcome, a.error]), [['skipped', 'SMTP_URL is not set']]);
    const row = await t.ctx.db.selectFrom('outbox').select(['status', 'payload']).where('id', '=', d.id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'skipped');
    const code = /code is (\d{6})/.exec((JSON.parse(row.payload) as { text: string }).text)?.[1];
    assert.ok(code, 'the email is kept');
    assert.ok(lines.some((l) => l.includes('SMTP_URL is not set') && l.includes(code)), 'the email (with its code) is printed to the log');
    assert.equal(await processDue(t.ctx, createSenders(t.ctx)), 0, 'not retried');
  });
});
