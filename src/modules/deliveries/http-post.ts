import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { BlockedAddressError, guardedLookup, isPrivateAddress } from './ssrf.js';

export interface PostResult {
  status: number;
  body: string;
}

/**
 * Parses an outgoing URL and refuses what is plainly not allowed before any connection: another
 * scheme than http(s), or (unless `allowPrivate`) a private address literal. Names are checked
 * when connecting (`guardedLookup`).
 */
export function outgoingTarget(url: string, allowPrivate: boolean): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new Error('invalid URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new Error(`unsupported protocol ${target.protocol}`);
  // WHATWG URL parsing already turns decimal, octal and hex spellings into dotted IPv4.
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && isIP(host) && isPrivateAddress(host)) throw new BlockedAddressError(host);
  return target;
}

/**
 * POSTs to a URL the way outgoing deliveries must: a hard deadline for the whole exchange, redirects never followed (a
 * 3xx is an answer like any other), and, unless `allowPrivate`, the target address checked when
 * connecting, on every attempt, so no name or literal can reach an internal service.
 */
export function postGuarded(url: string, body: string | Buffer, headers: Record<string, string>, opts: { timeoutMs: number; allowPrivate: boolean; agent?: https.Agent }): Promise<PostResult> {
  return new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = outgoingTarget(url, opts.allowPrivate);
    } catch (err) {
      return reject(err instanceof Error ? err : new Error(String(err)));
    }
    const client = target.protocol === 'https:' ? https : http;
    const req = client.request(
      target,
      {
        method: 'POST',
        headers: { 'content-length': Buffer.byteLength(body).toString(), ...headers },
        timeout: opts.timeoutMs,
        ...(opts.allowPrivate ? {} : { lookup: guardedLookup }),
        ...(opts.agent ? { agent: opts.agent } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          // Keep at most 64 KiB of a receiver's answer for the attempt log.
          if (size < 65_536) chunks.push(c);
          size += c.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, 2000) }));
        res.on('error', reject);
      },
    );
    // `timeout` above only notices silence; this deadline also ends a receiver that trickles bytes.
    const deadline = setTimeout(() => req.destroy(new Error(`timed out after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`timed out after ${opts.timeoutMs} ms`)));
    req.on('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    req.on('close', () => clearTimeout(deadline));
    req.end(body);
  });
}
