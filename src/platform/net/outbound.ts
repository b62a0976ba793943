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
 * forms that carry an IPv4 address a gateway would reach for us (IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96).
 */
const PRIVATE = subnets([
  ['127.0.0.0', 8, 'ipv4'], ['10.0.0.0', 8, 'ipv4'], ['172.16.0.0', 12, 'ipv4'], ['192.168.0.0', 16, 'ipv4'], ['0.0.0.0', 8, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'], ['::', 96, 'ipv6'], ['64:ff9b::', 96, 'ipv6'], ['fc00::', 7, 'ipv6'],
]);

/** An IPv4 address written as IPv6 (::ffff:a.b.c.d) is checked as the IPv4 address it is. */
const unmapped = (address: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address);

/** What kind of address an outbound request would reach that a rule may refuse, with the address as checked. */
export function restrictedAddress(rawAddress: string): { address: string; kind: 'metadata' | 'private' } | null {
  const address = unmapped(rawAddress);
  const type = net.isIPv4(address) ? 'ipv4' : 'ipv6';
  if (METADATA.check(address, type)) return { address, kind: 'metadata' };
  if (PRIVATE.check(address, type)) return { address, kind: 'private' };
  return null;
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
