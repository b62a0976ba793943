import { describe, expect, it } from 'vitest';
import { clientNetwork } from '../../src/platform/client-network.js';

describe('the network a per-IP budget is keyed on', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(clientNetwork('203.0.113.7')).toBe('203.0.113.7');
  });

  it('takes the /64 of an IPv6 address, however it is written', () => {
    expect(clientNetwork('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:0DB8:0001:0002::1')).toBe('2001:db8:1:2::/64');
    expect(clientNetwork('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientNetwork('::1')).toBe('0:0:0:0::/64');
    expect(clientNetwork('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });

  it('takes an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(clientNetwork('::ffff:198.51.100.20')).toBe('198.51.100.20');
    expect(clientNetwork('::ffff:c633:6414')).toBe('198.51.100.20');
  });
});
