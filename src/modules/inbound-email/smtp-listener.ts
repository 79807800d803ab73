import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { SMTPServerDataStream, SMTPServerSession } from 'smtp-server';
import type { AppContext } from '../../context.js';
import { flag } from '../../db/schema.js';
import { iso } from '../../lib/clock.js';
import { insertInbound } from './inbound.repository.js';
import { processPending } from './inbound.service.js';
import { authenticateFrom, relayList, type DNSResolver, type FromAuth } from './mail-auth.js';
import { clean, readHead, type MessageHead } from './message.js';
import { isRefusal, replierOf, resolveRecipient, senderAllowed, strangerRefusal, type Refusal, type Target } from './recipients.js';

export interface InboundListener {
  port: number;
  /** Resolves once every message accepted so far has been processed. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

const smtpError = (r: Refusal) => Object.assign(new Error(r.message), { responseCode: r.code });

/** Reads the DATA stream whole; smtp-server flags it once it passes the announced SIZE. */
async function readAll(stream: SMTPServerDataStream): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return stream.sizeExceeded ? undefined : Buffer.concat(chunks);
}

export interface InboundOptions {
  /** The DNS resolver mail authentication uses (tests answer from a table); default: the system's. */
  resolver?: DNSResolver;
}

const temporary = (message: string): Refusal => ({ code: 451, message });

/**
 * The inbound SMTP listener (INBOUND_SMTP_PORT): addresses are decided at RCPT time (550 for an
 * unknown one), senders at DATA time on the message's From: and its authentication (550 for a
 * sender that is not allowed), oversize mail gets 552, a client over the rate limit 421; an
 * accepted message is stored (one row per recipient) before 250 is answered, then processed into
 * incidents and replies. STARTTLS is offered when a certificate is configured.
 */
export async function startInboundSmtp(ctx: AppContext, options: InboundOptions = {}): Promise<InboundListener> {
  // smtp-server loads here, when a listener starts (INBOUND_SMTP_PORT), not at every start.
  const { SMTPServer } = await import('smtp-server');
  const cfg = ctx.config.inbound;
  const tls = cfg.tlsKey && cfg.tlsCert ? { key: fs.readFileSync(cfg.tlsKey), cert: fs.readFileSync(cfg.tlsCert) } : undefined;
  const perClient = new Map<string, { windowStart: number; n: number }>();
  const relays = relayList(ctx.config);
  let work: Promise<unknown> = Promise.resolve();

  const server = new SMTPServer({
    name: cfg.domain,
    banner: 'Muster inbound mail',
    size: cfg.maxBytes,
    authOptional: true,
    disabledCommands: tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    ...(tls ?? {}),
    logger: false,
    onConnect(session, callback) {
      if (cfg.perMinute === 0) return callback();
      const now = ctx.clock.now().getTime();
      const entry = perClient.get(session.remoteAddress);
      const current = entry && now - entry.windowStart < 60_000 ? entry : { windowStart: now, n: 0 };
      current.n += 1;
      perClient.set(session.remoteAddress, current);
      if (current.n > cfg.perMinute) return callback(smtpError({ code: 421, message: '4.7.0 Too many connections, try again later' }));
      callback();
    },
    onRcptTo(address, _session, callback) {
      resolveRecipient(ctx, address.address)
        .then((t) => callback(isRefusal(t) ? smtpError(t) : undefined))
        .catch((err: unknown) => {
          ctx.log.error({ err }, 'inbound email: recipient check failed');
          callback(smtpError(temporary('4.3.0 Temporary failure, try again later')));
        });
    },
    onData(stream, session, callback) {
      store(stream, session)
        .then((refusal) => {
          if (refusal) return callback(smtpError(refusal));
          kick();
          callback();
        })
        .catch((err: unknown) => {
          ctx.log.error({ err }, 'inbound email: storing failed');
          callback(smtpError(temporary('4.3.0 Temporary failure, try again later')));
        });
    },
  });

  /**
   * Reads the message, decides each recipient on its From: (authenticated or not) and stores one
   * row per accepted recipient in one transaction before the 250. Automatic mail is stored as
   * `ignored` (kept, never answered). When every recipient refuses the message, so does the answer.
   */
  async function store(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<Refusal | undefined> {
    const raw = await readAll(stream);
    if (!raw) return { code: 552, message: `5.3.4 Message exceeds the ${cfg.maxBytes} byte limit` };
    const envelopeFrom = session.envelope.mailFrom ? clean(session.envelope.mailFrom.address) : '';
    const head = await readHead(raw, envelopeFrom);
    const auth = await authenticateFrom(ctx.config, relays, raw, head.sender, { ip: session.remoteAddress, helo: session.hostNameAppearsAs, envelopeFrom }, head.authResults, options.resolver);
    const decided = await Promise.all(session.envelope.rcptTo.map(async (r) => decide(r.address, head, auth)));
    const accepted = decided.filter((d) => !d.refusal);
    if (accepted.length === 0) return decided[0]?.refusal ?? { code: 554, message: '5.5.1 No valid recipients' };
    const now = iso(ctx.clock.now());
    await ctx.transaction(async (tx) => {
      for (const d of decided) {
        if (!d.target) continue;
        const [org, live] = d.target.kind === 'integration' ? [d.target.integration.org_id, d.target.integration.livemode] : [d.target.incident.org_id, d.target.incident.livemode];
        // Refused beside an accepted recipient: the message was taken, so it is kept with why.
        const ignored = d.refusal?.message ?? head.automatic;
        await insertInbound(tx.db, {
          org_id: org,
          livemode: flag(live === 1),
          integration_id: d.target.kind === 'integration' ? d.target.integration.id : null,
          reply_to_incident_id: d.target.kind === 'reply' ? d.target.incident.id : null,
          mail_from: envelopeFrom,
          rcpt_to: clean(d.rcpt),
          message_id: head.messageId ?? null,
          raw: raw.toString('base64'),
          size: raw.length,
          status: ignored ? 'ignored' : 'pending',
          error: ignored ?? null,
          sender: head.sender ?? null,
          answer_to: head.answerTo ?? null,
          subject: head.subject ?? null,
          authenticated: flag(auth.authenticated),
          auth: auth.summary,
          created_at: now,
        });
      }
    });
    return undefined;
  }

  /** One recipient of the message: its target, and the refusal its sender gets there, if any. */
  async function decide(rcpt: string, head: MessageHead, auth: FromAuth): Promise<{ rcpt: string; target?: Target; refusal?: Refusal }> {
    const target = await resolveRecipient(ctx, rcpt);
    if (isRefusal(target)) return { rcpt, refusal: target };
    // A refusal that authentication would have lifted, while DNS failed for a passing reason: ask again later.
    const retryable = auth.temporary && !auth.authenticated ? temporary('4.7.0 Could not authenticate the sender now, try again later') : undefined;
    if (target.kind === 'integration') {
      const refusal = senderAllowed(target.integration, head.sender, auth.authenticated);
      if (refusal && retryable && senderAllowed(target.integration, head.sender, true) === undefined) return { rcpt, target, refusal: retryable };
      return refusal ? { rcpt, target, refusal } : { rcpt, target };
    }
    const replier = await replierOf(ctx, target.incident, head.sender, auth.authenticated);
    if (!replier) return { rcpt, target, refusal: strangerRefusal };
    if (replier.as === 'unverified' && retryable) return { rcpt, target, refusal: retryable };
    return { rcpt, target };
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(cfg.port ?? 0, cfg.host, () => resolve());
  });
  server.on('error', (err) => ctx.log.error({ err }, 'inbound SMTP error'));
  const port = (server.server.address() as AddressInfo).port;
  ctx.log.info({ port, domain: cfg.domain, starttls: Boolean(tls) }, 'inbound email listening');
  // Pick up anything stored but not processed before the last stop.
  const kick = () => {
    work = work.then(() => processPending(ctx)).catch((err: unknown) => ctx.log.error({ err }, 'inbound email processing failed'));
  };
  kick();
  // Retries what failed for a passing reason (a message is tried up to three times).
  const timer = setInterval(kick, 60_000);
  timer.unref();
  return {
    port,
    drain: async () => {
      let seen: Promise<unknown>;
      do {
        seen = work;
        await seen;
      } while (seen !== work);
    },
    close: () => {
      clearInterval(timer);
      return new Promise<void>((resolve) => server.close(() => resolve())).then(() => work.then(() => undefined));
    },
  };
}
