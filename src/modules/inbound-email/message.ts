import type { AddressObject, ParsedMail } from 'mailparser';
import { mailparser } from './parsers.js';

/**
 * Text taken from a received message, made safe to store: U+0000 removed (PostgreSQL text refuses
 * it, issue 31 F7; SQLite would keep it and hand it to every client), whether it came raw or
 * encoded (`=?utf-8?Q?a=00b?=`).
 */
export const clean = (s: string): string => (s.includes('\0') ? s.replace(/\0/g, '') : s);

/** What the headers of a received message say, read once at DATA time. */
export interface MessageHead {
  /** The From: address, lower case; undefined without exactly one. */
  sender: string | undefined;
  senderName: string | undefined;
  /** Where an answer goes: Reply-To:, else From:. */
  answerTo: string | undefined;
  subject: string | undefined;
  messageId: string | undefined;
  /** Why this is automatic mail (RFC 3834), or undefined for mail a person wrote. */
  automatic: string | undefined;
  /** The Authentication-Results headers, topmost (latest) first, unfolded. */
  authResults: string[];
}

function single(a: AddressObject | AddressObject[] | undefined): { address: string; name: string } | undefined {
  const all = (Array.isArray(a) ? a : a ? [a] : []).flatMap((o) => o.value);
  const one = all.length === 1 ? all[0] : undefined;
  return one?.address ? { address: clean(one.address).toLowerCase(), name: clean(one.name ?? '') } : undefined;
}

/** The header block of a message (what precedes the first empty line), at most 256 KiB of it. */
function headerBlock(raw: Buffer): Buffer {
  const window = raw.subarray(0, 256 * 1024);
  const crlf = window.indexOf('\r\n\r\n');
  const lf = window.indexOf('\n\n');
  const end = [crlf, lf].filter((i) => i >= 0).sort((a, b) => a - b)[0];
  return Buffer.concat([window.subarray(0, end ?? window.length), Buffer.from('\r\n\r\n')]);
}

/**
 * RFC 3834 and the conventions around it: mail no person wrote, which must neither open incidents
 * nor post replies nor be answered. A bounce has an empty return path (`MAIL FROM:<>`); vacation
 * and other responders say `Auto-Submitted` (anything but `no`); lists and newsletters say
 * `Precedence: bulk|list|junk` or carry `List-Id` / `List-Unsubscribe` (RFC 2919, 2369). Some
 * responders still send only the older `X-Autoreply` / `X-Autorespond`.
 */
export function automaticReason(mail: ParsedMail, envelopeFrom: string): string | undefined {
  if (envelopeFrom === '') return 'bounce (empty return path, MAIL FROM:<>)';
  const h = mail.headers;
  const text = (name: string) => {
    const v = h.get(name);
    return typeof v === 'string' ? v.trim().toLowerCase() : v === undefined ? undefined : JSON.stringify(v).toLowerCase();
  };
  const auto = text('auto-submitted');
  if (auto !== undefined && auto.split(';')[0]!.trim() !== 'no') return `automatic (Auto-Submitted: ${auto.split(';')[0]!.trim().slice(0, 40)})`;
  const precedence = text('precedence');
  if (precedence !== undefined && ['bulk', 'list', 'junk'].includes(precedence)) return `bulk (Precedence: ${precedence})`;
  const list = h.get('list') as Record<string, unknown> | undefined;
  if (list?.id !== undefined) return 'mailing list (List-Id)';
  if (list?.unsubscribe !== undefined) return 'mailing list (List-Unsubscribe)';
  if (h.has('x-autoreply') || h.has('x-autorespond')) return 'automatic (X-Autoreply)';
  return undefined;
}

/** Reads the headers of a received message (not its body). */
export async function readHead(raw: Buffer, envelopeFrom: string): Promise<MessageHead> {
  const { simpleParser } = await mailparser();
  const mail = await simpleParser(headerBlock(raw), { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true });
  const from = single(mail.from);
  const replyTo = single(mail.replyTo);
  const id = mail.messageId ? clean(mail.messageId).slice(0, 900) : undefined;
  return {
    sender: from?.address,
    senderName: from?.name || undefined,
    answerTo: replyTo?.address ?? from?.address,
    subject: mail.subject === undefined ? undefined : clean(mail.subject).slice(0, 1000),
    messageId: id && /^<[^<>\s]+>$/.test(id) ? id : undefined,
    automatic: automaticReason(mail, envelopeFrom),
    authResults: mail.headerLines.filter((l) => l.key === 'authentication-results').map((l) => l.line.replace(/^[^:]*:/, '').replace(/\r?\n[ \t]+/g, ' ').trim()),
  };
}

/** The domain of an address, lower case. */
export const domainOf = (address: string) => address.slice(address.lastIndexOf('@') + 1).toLowerCase();
