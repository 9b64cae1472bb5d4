/**
 * IPv6 addresses that carry an IPv4 address, and the IPv4 address each one reaches: a packet to
 * one of them ends at that IPv4 host (through a NAT64 gateway, a 6to4 or Teredo relay), so a
 * webhook is judged by where it really goes. `[64:ff9b::7f00:1]` is 127.0.0.1 behind NAT64.
 */
import { isIP } from 'node:net';

/** Bits [from, from + length) of the 128, counted from the most significant. */
type Bits = readonly [from: number, length: number];

interface Form {
  prefix: string;
  length: number;
  /** Where the IPv4 address's 32 bits sit, for each way the prefix may be used. */
  carriers: ReadonlyArray<readonly Bits[]>;
  /** Teredo: the client's address is sent inverted (RFC 4380 §4). */
  inverted?: boolean;
}

const LAST_32: readonly Bits[] = [[96, 32]];

const FORMS: readonly Form[] = [
  // RFC 4291 §2.5.5.2 IPv4-mapped, RFC 2765 §2.1 IPv4-translated (::ffff:0:a.b.c.d).
  { prefix: '::ffff:0:0', length: 96, carriers: [LAST_32] },
  { prefix: '::ffff:0:0:0', length: 96, carriers: [LAST_32] },
  // RFC 6052 §2.1 the well-known NAT64 prefix.
  { prefix: '64:ff9b::', length: 96, carriers: [LAST_32] },
  // RFC 8215 the local-use NAT64 prefix: an operator may use it at /48, /56, /64 or /96, and
  // RFC 6052 §2.2 places the IPv4 bits around the reserved octet (bits 64-71) by that length.
  { prefix: '64:ff9b:1::', length: 48, carriers: [[[48, 16], [72, 16]], [[56, 8], [72, 24]], [[72, 32]], LAST_32] },
  // RFC 3056 §2 6to4: 2002:AABB:CCDD::/48.
  { prefix: '2002::', length: 16, carriers: [[[16, 32]]] },
  // RFC 4380 §4 Teredo: the server's address in bits 32-63, the client's inverted in the last 32.
  { prefix: '2001::', length: 32, carriers: [[[32, 32]]] },
  { prefix: '2001::', length: 32, carriers: [LAST_32], inverted: true },
];

/** The 128 bits of an IPv6 address (a zone id dropped), or undefined for anything else. */
export function ipv6Bits(text: string): bigint | undefined {
  const address = text.replace(/%.*$/, '');
  if (isIP(address) !== 6) return undefined;
  // A dotted IPv4 tail (::ffff:1.2.3.4) as its two groups.
  const hex = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_m, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`);
  const [left = '', right] = hex.split('::');
  const head = left === '' ? [] : left.split(':');
  const tail = right === undefined || right === '' ? [] : right.split(':');
  const groups = [...head, ...Array<string>(right === undefined ? 0 : 8 - head.length - tail.length).fill('0'), ...tail];
  return groups.reduce((bits, group) => (bits << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function slice(bits: bigint, [from, length]: Bits): bigint {
  return (bits >> BigInt(128 - from - length)) & ((1n << BigInt(length)) - 1n);
}

function dotted(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => Number((value >> shift) & 255n)).join('.');
}

const within = (bits: bigint, form: Form) => bits >> BigInt(128 - form.length) === (ipv6Bits(form.prefix) ?? 0n) >> BigInt(128 - form.length);

/** Every IPv4 address the IPv6 address may deliver to (none for a plain IPv6 address). */
export function embeddedIPv4(address: string): string[] {
  const bits = ipv6Bits(address);
  if (bits === undefined) return [];
  return FORMS.filter((form) => within(bits, form)).flatMap((form) => form.carriers.map((carrier) => {
    const value = carrier.reduce((acc, part) => (acc << BigInt(part[1])) | slice(bits, part), 0n);
    return dotted(form.inverted ? ~value & 0xffffffffn : value);
  }));
}
