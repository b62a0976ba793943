import { isIPv6 } from 'node:net';

/** The eight 16-bit groups of an IPv6 address, `::` expanded (an embedded IPv4 tail counts as two). */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const parts = (text: string) => (text ? text.split(':') : []).flatMap((part) => {
    if (!part.includes('.')) return [part];
    const [a, b, c, d] = part.split('.').map(Number);
    return [((a! << 8) | b!).toString(16), ((c! << 8) | d!).toString(16)];
  });
  const [left, right] = [parts(head), parts(tail ?? '')];
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''));
}

/**
 * Who a per-IP budget belongs to: an IPv4 address as it is, an IPv6 address by its /64. One subscriber
 * usually holds a whole /64 and can use any address in it, so keying on the full address would give an
 * attacker 2^64 budgets. An IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`) counts as the IPv4 one.
 */
export function clientNetwork(ipAddress: string): string {
  const address = ipAddress.replace(/%.*$/, '');
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 6).join(':') === '0:0:0:0:0:ffff';
  if (mapped) return [parseInt(groups[6]!, 16) >> 8, parseInt(groups[6]!, 16) & 255, parseInt(groups[7]!, 16) >> 8, parseInt(groups[7]!, 16) & 255].join('.');
  return `${groups.slice(0, 4).join(':')}::/64`;
}
