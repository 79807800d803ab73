import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { AppContext } from '../../context.js';
import { flag } from '../../db/schema.js';
import { iso } from '../../lib/clock.js';
import { insertInbound } from './inbound.repository.js';
import { processPending } from './inbound.service.js';
import { isRefusal, resolveRecipient, type Refusal } from './recipients.js';

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

/**
 * The inbound SMTP listener (INBOUND_SMTP_PORT): recipients are decided at RCPT time (550 for an
 * unknown address or a sender that is not allowed), oversize mail gets 552, a client over the rate
 * limit 421; an accepted message is stored (one row per recipient) before 250 is answered, then
 * processed into incidents and replies. STARTTLS is offered when a certificate is configured.
 */
export async function startInboundSmtp(ctx: AppContext): Promise<InboundListener> {
  const cfg = ctx.config.inbound;
  const tls = cfg.tlsKey && cfg.tlsCert ? { key: fs.readFileSync(cfg.tlsKey), cert: fs.readFileSync(cfg.tlsCert) } : undefined;
  const perClient = new Map<string, { windowStart: number; n: number }>();
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
    onRcptTo(address, session, callback) {
      resolveRecipient(ctx, address.address, session.envelope.mailFrom ? session.envelope.mailFrom.address : '')
        .then((t) => callback(isRefusal(t) ? smtpError(t) : undefined))
        .catch((err: unknown) => {
          ctx.log.error({ err }, 'inbound email: recipient check failed');
          callback(smtpError({ code: 451, message: '4.3.0 Temporary failure, try again later' }));
        });
    },
    onData(stream, session, callback) {
      store(stream, session)
        .then((stored) => {
          if (!stored) return callback(smtpError({ code: 552, message: `5.3.4 Message exceeds the ${cfg.maxBytes} byte limit` }));
          kick();
          callback();
        })
        .catch((err: unknown) => {
          ctx.log.error({ err }, 'inbound email: storing failed');
          callback(smtpError({ code: 451, message: '4.3.0 Temporary failure, try again later' }));
        });
    },
  });

  /** One row per accepted recipient, in one transaction, before the 250. */
  async function store(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<boolean> {
    const raw = await readAll(stream);
    if (!raw) return false;
    const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const messageId = /^message-id:\s*(<[^>\r\n]{1,900}>)/im.exec(raw.subarray(0, 64 * 1024).toString('latin1'))?.[1] ?? null;
    const targets = await Promise.all(session.envelope.rcptTo.map(async (r) => ({ rcpt: r.address, target: await resolveRecipient(ctx, r.address, from) })));
    await ctx.transaction(async (tx) => {
      for (const { rcpt, target } of targets) {
        if (isRefusal(target)) continue;
        const [org, live] = target.kind === 'integration' ? [target.integration.org_id, target.integration.livemode] : [target.incident.org_id, target.incident.livemode];
        await insertInbound(tx.db, {
          org_id: org,
          livemode: flag(live === 1),
          integration_id: target.kind === 'integration' ? target.integration.id : null,
          reply_to_incident_id: target.kind === 'reply' ? target.incident.id : null,
          mail_from: from,
          rcpt_to: rcpt,
          message_id: messageId,
          raw: raw.toString('base64'),
          created_at: iso(ctx.clock.now()),
        });
      }
    });
    return true;
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
