/**
 * Which addresses and URLs a webhook may reach (server-side request forgery): none that is
 * loopback, private (RFC 1918, RFC 4193), link-local (cloud metadata at 169.254.169.254 included),
 * CGNAT (RFC 6598), unspecified, multicast or reserved, in IPv4 or IPv6 form (IPv4-compatible ::/96 too,
 * site-local fec0::/10, discard-only 100::/64), unless IDP_WEBHOOK_ALLOWED_NETWORKS lists it. An IPv6
 * address that carries an IPv4 address (mapped, translated, NAT64, 6to4, Teredo: src/events/embedded-ipv4.ts)
 * is judged by that IPv4 address too: behind a NAT64 gateway `[64:ff9b::a00:1]` is 10.0.0.1.
 * Outside production loopback and `http:` are allowed, so that a developer can receive events locally.
 */
import { BlockList, isIP } from 'node:net';
import { embeddedIPv4 } from './embedded-ipv4.ts';

const REFUSED_V4 = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const;
// RFC 3879 deprecated site-local fec0::/10 but a network may still route it; RFC 6666 100::/64 discards.
const REFUSED_V6 = [['::', 96], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['100::', 64]] as const;

export interface AddressPolicyOptions {
  production: boolean;
  /** CIDR ranges allowed even so (`10.20.0.0/16`). */
  allowedNetworks: readonly string[];
}

export interface AddressPolicy {
  /** Whether a webhook may connect to this IP address. */
  permits(address: string): boolean;
  /** Why a URL may not be a webhook's (its scheme, credentials, an address literal refused), else undefined. */
  urlProblem(url: URL): string | undefined;
}

/** `::ffff:10.0.0.1` and `::ffff:a00:1` are 10.0.0.1; any other address as it is. */
export function unmapped(address: string): { address: string; family: 4 | 6 } {
  const lower = address.toLowerCase().replace(/^\[|\]$/g, '');
  if (isIP(lower) === 4) return { address: lower, family: 4 };
  const mapped = /^(?:0{0,4}:){0,4}:?(?:0{0,4}:)?ffff:(.+)$/.exec(lower)?.[1];
  if (mapped !== undefined) {
    if (isIP(mapped) === 4) return { address: mapped, family: 4 };
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(mapped);
    if (hex) {
      const [high, low] = [parseInt(hex[1] as string, 16), parseInt(hex[2] as string, 16)];
      return { address: [high >> 8, high & 255, low >> 8, low & 255].join('.'), family: 4 };
    }
  }
  return { address: lower, family: 6 };
}

function rangeList(ranges: ReadonlyArray<readonly [string, number]>): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of ranges) list.addSubnet(network, prefix, isIP(network) === 4 ? 'ipv4' : 'ipv6');
  return list;
}

export function createAddressPolicy(options: AddressPolicyOptions): AddressPolicy {
  const refused = rangeList([...REFUSED_V4, ...REFUSED_V6]);
  const allowed = rangeList(options.allowedNetworks.map((cidr) => {
    const [network = '', bits] = cidr.split('/');
    return [unmapped(network).address, bits === undefined ? (isIP(network) === 4 ? 32 : 128) : Number(bits)] as const;
  }));
  const loopback = rangeList([['127.0.0.0', 8], ['::1', 128]]);
  const permits = (raw: string): boolean => {
    const { address, family } = unmapped(raw);
    if (isIP(address) === 0) return false;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (allowed.check(address, type)) return true;
    if (!options.production && loopback.check(address, type)) return true;
    return !refused.check(address, type) && embeddedIPv4(address).every(permits);
  };
  return {
    permits,
    urlProblem(url) {
      if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
      if (options.production && url.protocol !== 'https:') return 'must be an https URL (http is allowed outside production only)';
      if (url.username || url.password) return 'must not carry credentials';
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) !== 0 && !permits(host)) return `must not point to ${host}: a loopback, private, link-local or reserved address (IDP_WEBHOOK_ALLOWED_NETWORKS can allow a range)`;
      return undefined;
    },
  };
}
