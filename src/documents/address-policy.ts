import { BlockList, isIP } from 'node:net';

/**
 * Which resolved addresses the guarded fetcher may connect to. The default refuses everything that is not
 * a public unicast address; tests inject a policy that also allows 127.0.0.1 for a loopback page.
 */
export interface AddressPolicy {
  isAllowed(address: string): boolean;
}

const blockedV4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // private (RFC 1918)
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, incl. cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, incl. broadcast
] as const) {
  blockedV4.addSubnet(net, prefix, 'ipv4');
}

const blockedV6 = new BlockList();
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['::', 96], // IPv4-compatible (deprecated)
  ['100::', 64], // discard-only
  ['2001:db8::', 32], // documentation
  ['2001::', 32], // Teredo (tunnels to arbitrary v4)
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blockedV6.addSubnet(net, prefix, 'ipv6');
}

/** Expands an IPv6 address to its 8 groups (numbers), handling :: and a dotted IPv4 tail. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    text =
      text.slice(0, -dotted[1]!.length) +
      `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const missing = 8 - h.length - t.length;
  if (tail === undefined && h.length !== 8) return undefined;
  const groups = [...h, ...Array<string>(Math.max(0, missing)).fill('0'), ...t].map((g) => parseInt(g || '0', 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

function v4FromGroups(hi: number, lo: number): string {
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/**
 * The IPv4 address an IPv6 address carries and routes to: IPv4-mapped (::ffff:a.b.c.d), NAT64
 * (64:ff9b::/96) and 6to4 (2002::/16). Checking the embedded address stops "::ffff:127.0.0.1" tricks.
 */
export function embeddedIpv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (!g) return undefined;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return v4FromGroups(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4FromGroups(g[6]!, g[7]!);
  if (g[0] === 0x2002) return v4FromGroups(g[1]!, g[2]!);
  return undefined;
}

/** True for a public unicast address; false for private, loopback, link-local, ULA, multicast, unspecified, reserved. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blockedV4.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== undefined) return isPublicAddress(v4);
    return !blockedV6.check(address.split('%')[0]!, 'ipv6');
  }
  return false;
}

/** The production policy: public unicast addresses only. */
export const publicAddressesOnly: AddressPolicy = Object.freeze({ isAllowed: isPublicAddress });

/** A policy that also allows exactly the given addresses (tests: a loopback page on 127.0.0.1). */
export function allowAlso(addresses: string[], base: AddressPolicy = publicAddressesOnly): AddressPolicy {
  const extra = new Set(addresses);
  return { isAllowed: (address) => extra.has(address) || base.isAllowed(address) };
}
