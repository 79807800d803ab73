import { BlockList, isIP } from 'node:net';
import type { AuthenticateResult, DNSResolver } from 'mailauth';
import { mailauth } from './parsers.js';
import type { Config } from '../../config.js';
import { domainOf } from './message.js';

export type { DNSResolver };

/** Whether the message's From: is authenticated, and a one-line account of why (or why not). */
export interface FromAuth {
  authenticated: boolean;
  summary: string;
  /** A DNS lookup failed for a passing reason: a decision resting on this may be asked again later (451). */
  temporary: boolean;
}

/** Where a message came from in the SMTP session. */
export interface Arrival {
  ip: string;
  helo: string;
  envelopeFrom: string;
}

/** `::ffff:192.0.2.1` as 192.0.2.1 (a dual-stack listener reports IPv4 clients so). */
const plainIp = (ip: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? ip.slice(7) : ip);

/** Whether `domain` is `org` or one of its subdomains (relaxed alignment once `org` is the From: domain's organizational domain). */
const within = (domain: string, org: string) => domain === org || domain.endsWith(`.${org}`);

/** The relays of INBOUND_TRUSTED_RELAYS as one list of addresses and ranges. */
export function relayList(config: Config): BlockList {
  const list = new BlockList();
  for (const entry of config.inbound.trustedRelays) {
    const [ip, bits] = entry.split('/') as [string, string | undefined];
    const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(bits), type);
  }
  return list;
}

/** One Authentication-Results header (RFC 8601): its authserv-id and each `method=result` with its properties. */
function parseAuthResults(value: string): { authservId: string; results: ResInfo[] } {
  let text = value;
  // Comments may nest; drop the innermost first.
  for (let i = 0; i < 5 && /\([^()]*\)/.test(text); i += 1) text = text.replace(/\([^()]*\)/g, ' ');
  const [head = '', ...rest] = text.split(';');
  const results = rest.flatMap((part) => {
    const m = /^\s*([a-z0-9_-]+)\s*=\s*([a-z]+)(.*)$/is.exec(part);
    if (!m) return [];
    const props = new Map<string, string>();
    for (const p of m[3]!.matchAll(/([a-z0-9_-]+\.[a-z0-9_-]+)\s*=\s*"?([^\s";]+)"?/gi)) props.set(p[1]!.toLowerCase(), p[2]!.toLowerCase());
    return [{ method: m[1]!.toLowerCase(), result: m[2]!.toLowerCase(), props }];
  });
  return { authservId: head.trim().split(/\s+/)[0]!.toLowerCase(), results };
}

type ResInfo = { method: string; result: string; props: Map<string, string> };

/**
 * Someone else's results (a relay's header, a forwarder's ARC set) authenticate this From: by the
 * rule Muster applies itself: dmarc=pass for its domain, or where the domain has no DMARC record
 * (dmarc=none or absent), a passing DKIM signature or SPF check aligned with it (relaxed).
 * `header.from` may name the organizational domain (mailauth writes it so), which then sets the
 * alignment.
 */
function passIn(results: readonly ResInfo[], fromDomain: string): boolean {
  const dmarc = results.find((r) => r.method === 'dmarc');
  const named = dmarc?.props.get('header.from');
  const org = named && within(fromDomain, named) ? named : fromDomain;
  if (dmarc && named && !within(fromDomain, named)) return false;
  if (dmarc?.result === 'pass') return true;
  if (dmarc && dmarc.result !== 'none') return false;
  const aligned = (domain: string | undefined) => domain !== undefined && within(domain.replace(/^.*@/, ''), org);
  return results.some((r) => r.result === 'pass' && ((r.method === 'dkim' && aligned(r.props.get('header.d') ?? r.props.get('header.i'))) || (r.method === 'spf' && aligned(r.props.get('smtp.mailfrom')))));
}

/** mailauth's parsed ARC-Authentication-Results, in the shape of parseAuthResults. */
function arcResults(aar: Record<string, unknown>): ResInfo[] {
  type Entry = { result?: string; header?: Record<string, string | undefined>; smtp?: Record<string, string | undefined> };
  const entry = (method: string, e: Entry | undefined, props: [string, string | undefined][]): ResInfo[] =>
    e?.result ? [{ method, result: e.result.toLowerCase(), props: new Map(props.filter((p): p is [string, string] => p[1] !== undefined).map(([k, v]) => [k, v.toLowerCase()])) }] : [];
  const dmarc = aar.dmarc as Entry | undefined;
  const spf = aar.spf as Entry | undefined;
  return [
    ...entry('dmarc', dmarc, [['header.from', dmarc?.header?.from]]),
    ...entry('spf', spf, [['smtp.mailfrom', spf?.smtp?.mailfrom]]),
    ...((aar.dkim as Entry[] | undefined) ?? []).flatMap((d) => entry('dkim', d, [['header.d', d.header?.d], ['header.i', d.header?.i]])),
  ];
}

/** Muster's own check: DMARC, or where the domain publishes no DMARC record, the same alignment rule (relaxed). */
function ownVerdict(r: AuthenticateResult, fromDomain: string): { pass: boolean; summary: string } {
  const dmarc = r.dmarc;
  if (!dmarc) return { pass: false, summary: 'no single From: address' };
  if (dmarc.status.result === 'pass') return { pass: true, summary: `dmarc=pass through ${dmarc.alignment?.dkim?.result ? `dkim (d=${dmarc.alignment.dkim.result})` : 'spf'} header.from=${fromDomain}` };
  if (dmarc.status.result === 'none') {
    const dkim = r.dkim.results.find((s) => s.status.result === 'pass' && s.status.aligned);
    if (dkim) return { pass: true, summary: `dkim=pass d=${dkim.signingDomain} aligned with header.from=${fromDomain} (no DMARC record)` };
    const spf = r.spf;
    if (spf && spf.status.result === 'pass' && within(spf.domain.toLowerCase(), dmarc.domain.toLowerCase())) {
      return { pass: true, summary: `spf=pass smtp.mailfrom=${spf.domain} aligned with header.from=${fromDomain} (no DMARC record)` };
    }
  }
  const dkimResults = r.dkim.results.map((s) => `dkim=${s.status.result}${s.signingDomain ? ` d=${s.signingDomain}` : ''}`);
  return { pass: false, summary: [`dmarc=${dmarc.status.result}`, ...(dkimResults.length ? dkimResults : ['dkim=none']), `spf=${r.spf ? r.spf.status.result : 'none'}`, `header.from=${fromDomain}`].join(' ') };
}

/**
 * Authenticates a message's From: (issue 31, F9; SECURITY.md "Mail authentication"), with mailauth:
 * DMARC alignment through DKIM or SPF (for a domain without a DMARC record, the same relaxed
 * alignment). Otherwise, trusted only when the operator named where it came from: a relay
 * (INBOUND_TRUSTED_RELAYS, the connecting address) whose own Authentication-Results header
 * (INBOUND_TRUSTED_AUTHSERV_IDS, the topmost of that name) says dmarc=pass for this From: domain;
 * or a forwarder (INBOUND_TRUSTED_FORWARDERS) whose valid ARC seal records dmarc=pass for it.
 */
export async function authenticateFrom(config: Config, relays: BlockList, raw: Buffer, sender: string | undefined, at: Arrival, authResults: readonly string[], resolver?: DNSResolver): Promise<FromAuth> {
  if (!sender) return { authenticated: false, summary: 'no single From: address', temporary: false };
  const fromDomain = domainOf(sender);
  const ip = plainIp(at.ip);
  const { authenticate } = await mailauth();
  const r = await authenticate(raw, {
    ip,
    helo: at.helo,
    sender: at.envelopeFrom,
    mta: config.inbound.domain ?? 'muster',
    disableBimi: true,
    ...(resolver ? { resolver } : {}),
  });
  const own = ownVerdict(r, fromDomain);
  if (own.pass) return { authenticated: true, summary: own.summary, temporary: false };

  if (isIP(ip) && relays.check(ip, isIP(ip) === 6 ? 'ipv6' : 'ipv4')) {
    const header = authResults.map(parseAuthResults).find((h) => config.inbound.relayAuthservIds.includes(h.authservId));
    if (header && passIn(header.results, fromDomain)) return { authenticated: true, summary: `${fromDomain} authenticated by trusted relay ${header.authservId} (${ip})`, temporary: false };
  }
  const arc = r.arc;
  const sealer = arc && arc.status.result === 'pass' && arc.signature ? arc.signature.signingDomain.toLowerCase() : undefined;
  if (arc && sealer && config.inbound.trustedForwarders.some((f) => within(sealer, f))) {
    if (passIn(arcResults(arc.authenticationResults ?? {}), fromDomain)) {
      return { authenticated: true, summary: `${fromDomain} authenticated by trusted forwarder ${sealer} (ARC i=${String(arc.i)})`, temporary: false };
    }
  }
  const temporary = [r.dmarc ? r.dmarc.status.result : '', r.spf ? r.spf.status.result : '', ...r.dkim.results.map((s) => s.status.result)].some((x) => x === 'temperror' || x === 'temperr');
  return { authenticated: false, summary: own.summary, temporary };
}
