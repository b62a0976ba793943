import { lookup, type LookupAddress, type LookupAllOptions, type LookupOneOptions } from 'node:dns';
import net from 'node:net';
import type * as Undici from 'undici';

const subnets = (ranges: [string, number, 'ipv4' | 'ipv6'][]) => {
  const list = new net.BlockList();
  for (const [address, prefix, type] of ranges) list.addSubnet(address, prefix, type);
  return list;
};

/** Link-local (cloud metadata lives there) and the known metadata addresses elsewhere. */
const METADATA = subnets([['169.254.0.0', 16, 'ipv4'], ['fe80::', 10, 'ipv6'], ['100.100.100.200', 32, 'ipv4'], ['fd00:ec2::254', 128, 'ipv6']]);
/**
 * This host, private and carrier-grade NAT networks, "any address" (which reaches this host), and the IPv6
 * ranges that reach IPv4 through a gateway of the local network (IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96,
 * the local-use NAT64 64:ff9b:1::/48 of RFC 8215), whatever IPv4 address they carry.
 */
const PRIVATE = subnets([
  ['127.0.0.0', 8, 'ipv4'], ['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['0.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], ['::', 96, 'ipv6'], ['64:ff9b::', 96, 'ipv6'], ['64:ff9b:1::', 48, 'ipv6'], ['fc00::', 7, 'ipv6'],
]);

/** The eight 16-bit groups of a valid IPv6 address (a trailing dotted quad and `::` expanded; a zone dropped). */
function ipv6Groups(address: string): number[] {
  let text = address.replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const [first, last] = [groups(head), tail === undefined ? [] : groups(tail)];
  return [...first, ...new Array<number>(8 - first.length - last.length).fill(0), ...last];
}

const dotted = (bytes: number[]) => bytes.join('.');
const bytesOf = (groups: number[]) => groups.flatMap((group) => [group >> 8, group & 0xff]);

/**
 * The IPv4 addresses an IPv6 address carries, by every form that embeds one: IPv4-mapped ::ffff:a.b.c.d,
 * SIIT ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002:AABB:CCDD::/48, Teredo
 * 2001:0::/32 (the client's address, inverted, in the last 32 bits), and the local-use NAT64 64:ff9b:1::/48,
 * whose translator may use any RFC 6052 prefix length: each position that length allows is a candidate.
 */
function embeddedIPv4(address: string): string[] {
  const g = ipv6Groups(address);
  const b = bytesOf(g);
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return [dotted(b.slice(12))];
  // :: and ::1 are IPv6's own unspecified and loopback addresses, not IPv4-compatible ones.
  if (zeros(0, 6) && !(g[6] === 0 && g[7]! <= 1)) return [dotted(b.slice(12))];
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [dotted(b.slice(12))];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [dotted(b.slice(12))];
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) {
    // RFC 6052 §2.2: prefix lengths 48, 56, 64, 80 and 96; bits 64 to 71 are never part of the address.
    return [[6, 7, 9, 10], [7, 9, 10, 11], [9, 10, 11, 12], [10, 11, 12, 13], [12, 13, 14, 15]].map((at) => dotted(at.map((i) => b[i]!)));
  }
  if (g[0] === 0x2002) return [dotted(b.slice(2, 6))];
  if (g[0] === 0x2001 && g[1] === 0) return [dotted(b.slice(12).map((byte) => byte ^ 0xff))];
  return [];
}

type Restriction = { address: string; kind: 'metadata' | 'private' };

function restrictionOf(address: string, checked = address): Restriction | null {
  const type = net.isIPv4(address) ? 'ipv4' : 'ipv6';
  if (METADATA.check(address, type)) return { address: checked, kind: 'metadata' };
  if (PRIVATE.check(address, type)) return { address: checked, kind: 'private' };
  return null;
}

const SEVERITY = { metadata: 2, private: 1 } as const;

/**
 * What kind of address an outbound request would reach that a rule may refuse, with the address as checked.
 * An IPv6 address that carries an IPv4 one is judged as both, and the stricter verdict holds: a gateway, a
 * relay or the socket itself may deliver it to that IPv4 address (`[64:ff9b::a9fe:a9fe]` is 169.254.169.254).
 */
export function restrictedAddress(rawAddress: string): Restriction | null {
  const address = rawAddress.replace(/%.*$/, '');
  const carried = net.isIPv6(address) ? embeddedIPv4(address).map((ipv4) => restrictionOf(ipv4, `${address} (IPv4 ${ipv4})`)) : [];
  return [...carried, restrictionOf(address)].reduce<Restriction | null>(
    (worst, next) => (next && (!worst || SEVERITY[next.kind] > SEVERITY[worst.kind]) ? next : worst), null);
}

/** Why an outbound request may not go to an address, or null when it may. */
export type AddressRule = (address: string) => string | null;

/** A request an address rule refused: never sent. */
export class RefusedTarget extends Error {}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** DNS as Node's sockets ask it, answering only the addresses the rule allows: the rule holds after resolution. */
export function checkedLookup(rule: AddressRule) {
  return (hostname: string, options: LookupOneOptions | LookupAllOptions, callback: LookupCallback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const reasons = addresses.map((a) => rule(a.address));
      const allowed = addresses.filter((_, i) => reasons[i] === null);
      if (allowed.length === 0) return callback(new RefusedTarget(`${hostname} resolves only to refused addresses: ${reasons[0]}`), []);
      if (options.all) return callback(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

/** Why the rule refuses the address written in a URL (an address is never looked up, so it is checked here). */
export function literalRefusal(url: URL, rule: AddressRule): string | null {
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return net.isIP(literal) ? rule(literal) : null;
}

export type OutboundFetch = (input: string | URL, init?: object) => Promise<Response>;

/**
 * `fetch` whose connections go only where the rule allows, checked on the addresses DNS answers (so a name
 * that resolves to a refused address is refused too) and on an address written in the URL.
 */
export function guardedFetch(rule: AddressRule): OutboundFetch {
  // Loaded at the first request, not at start-up: most deployments never make one.
  let undici: Promise<{ fetch: typeof Undici.fetch; dispatcher: Undici.Agent }> | undefined;
  const load = () => (undici ??= import('undici').then(({ Agent, fetch }) => ({ fetch, dispatcher: new Agent({ connect: { lookup: checkedLookup(rule) } }) })));
  return async (input, init) => {
    const reason = literalRefusal(new URL(input), rule);
    if (reason) throw new RefusedTarget(reason);
    const { fetch, dispatcher } = await load();
    try {
      // undici's own Response; openid-client and our callers read it as the global one (the same class, another copy).
      return await fetch(input, { ...init, dispatcher }) as unknown as Response;
    } catch (err) {
      // fetch reports every network failure as "fetch failed"; the refusal is what the caller should read.
      const cause = (err as { cause?: unknown }).cause;
      throw cause instanceof RefusedTarget ? cause : err;
    }
  };
}

/**
 * Identity providers (SAML metadata, OpenID and OAuth endpoints) may live on private networks, as internal
 * IdPs of self-hosters do, but never at a link-local or cloud-metadata address: a tenant's connection
 * settings must not reach the credentials of the machine Gatehouse runs on.
 */
export const identityProviderAddressRule: AddressRule = (address) => {
  const restricted = restrictedAddress(address);
  return restricted?.kind === 'metadata' ? `${restricted.address} is a link-local or cloud-metadata address, never an identity provider` : null;
};

export const identityProviderFetch = guardedFetch(identityProviderAddressRule);
