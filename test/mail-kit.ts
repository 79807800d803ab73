// Mail the way real senders send it, for the inbound listener's tests: a DNS the test controls
// (DKIM keys, DMARC and SPF records as TXT), DKIM signatures made with nodemailer (the same
// signer real servers use), and the envelope a client chooses (an SRS return path, `MAIL FROM:<>`).
import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { DNSResolver } from 'mailauth';

export interface MailDns {
  resolver: DNSResolver;
  /** Publishes a TXT record. */
  txt(name: string, value: string): void;
  /** Publishes a DKIM key for `domain` (selector `sel`) and answers the signing options for nodemailer. */
  dkim(domain: string, selector?: string): DkimKey;
  /** Makes every lookup under `domain` fail for a passing reason (SERVFAIL), as a DNS outage does. */
  fail(domain: string): void;
  /** How many lookups were answered (a test can see authentication ran). */
  lookups(): number;
}

export interface DkimKey {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

/** A resolver answering only what the test published; anything else does not exist (ENOTFOUND), at once. */
export function mailDns(): MailDns {
  const records = new Map<string, string[]>();
  const failing = new Set<string>();
  let n = 0;
  const resolver: DNSResolver = (name: string, rrtype: string) => {
    n += 1;
    const lower = name.toLowerCase();
    if ([...failing].some((d) => lower === d || lower.endsWith(`.${d}`))) return Promise.reject(Object.assign(new Error(`query ESERVFAIL ${name}`), { code: 'ESERVFAIL', hostname: name }));
    const found = rrtype === 'TXT' ? records.get(name.toLowerCase()) : undefined;
    if (!found) return Promise.reject(Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND', hostname: name }));
    return Promise.resolve(found.map((v) => [v]));
  };
  const txt = (name: string, value: string) => records.set(name.toLowerCase(), [...(records.get(name.toLowerCase()) ?? []), value]);
  return {
    resolver,
    txt,
    dkim(domain, selector = 'sel') {
      const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const spki = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
      txt(`${selector}._domainkey.${domain}`, `v=DKIM1; k=rsa; p=${spki}`);
      return { domainName: domain, keySelector: selector, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
    },
    fail: (domain) => failing.add(domain.toLowerCase()),
    lookups: () => n,
  };
}

export interface SendOptions {
  /** The SMTP envelope, when it differs from the headers (forwarding with SRS, a bounce's `MAIL FROM:<>`). */
  envelope?: { from: string; to: string[] };
  /** Signs the message (DKIM-Signature header) with this key. */
  dkim?: DkimKey;
  /** The client's own address (another loopback address plays another host: 127.0.0.2 a relay). */
  localAddress?: string;
}

/** Sends one message to the listener on `port` with nodemailer; resolves with its answer or rejects with the SMTP refusal. */
export async function sendTo(port: number, mail: nodemailer.SendMailOptions, o: SendOptions = {}) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, ignoreTLS: true, name: 'client.example.net', ...(o.localAddress ? { localAddress: o.localAddress } : {}) });
  try {
    return await transport.sendMail({ ...mail, ...(o.envelope ? { envelope: o.envelope } : {}), ...(o.dkim ? { dkim: o.dkim } : {}) });
  } finally {
    transport.close();
  }
}

/** The SMTP reply code a refused message got (the test fails if it was accepted). */
export async function refusalCode(port: number, mail: nodemailer.SendMailOptions, o: SendOptions = {}): Promise<number | undefined> {
  const err = await sendTo(port, mail, o).then(
    () => undefined,
    (e: unknown) => e as { responseCode?: number },
  );
  if (!err) throw new Error('the message was accepted');
  return err.responseCode;
}
