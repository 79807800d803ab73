import { BlockList, isIP } from 'node:net';
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';

// Addresses a webhook may never reach unless MUSTER_ALLOW_PRIVATE_WEBHOOKS=1: loopback, private,
// link-local (cloud metadata), carrier-grade NAT, unspecified, multicast and reserved ranges.
const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, bits, 'ipv4');
// IPv6: unspecified, loopback, IPv4-compatible (deprecated ::a.b.c.d), unique-local, link-local,
// multicast, documentation, 6to4 (embeds an IPv4 address) and local-use NAT64.
for (const [net, bits] of [['::', 96], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['2001:db8::', 32], ['2002::', 16], ['64:ff9b:1::', 48]] as const) blocked.addSubnet(net, bits, 'ipv6');

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address. */
function embeddedV4(ip: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (m) return m[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (!hex) return undefined;
  const n = (parseInt(hex[1]!, 16) << 16) | parseInt(hex[2]!, 16);
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

export function isPrivateAddress(ip: string): boolean {
  const v4 = isIP(ip) === 6 ? embeddedV4(ip) : undefined;
  if (v4) return blocked.check(v4, 'ipv4');
  const family = isIP(ip);
  if (family === 0) return true; // not an address: refuse rather than guess
  return blocked.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

export class BlockedAddressError extends Error {
  constructor(readonly address: string) {
    super(`refused: ${address} is a private, loopback or link-local address`);
    this.name = 'BlockedAddressError';
  }
}

/**
 * A `lookup` for net/http that resolves the name and refuses it when any of its addresses is
 * private. It runs at connect time on every attempt, so a name that later resolves elsewhere
 * (DNS rebinding) is checked again. IP literals never reach a lookup: check them with
 * `isPrivateAddress` before connecting.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) return callback(new BlockedAddressError(bad.address), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
    const first = addresses[0]!;
    callback(null, first.address, first.family);
  });
};
