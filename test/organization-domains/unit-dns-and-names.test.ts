import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDnsServerEntry, loadConfig } from '../../src/config.js';
import { createTxtLookup } from '../../src/organization-domains/dns.js';
import { emailDomain, normalizeDomain } from '../../src/organization-domains/names.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { PATIENCE_MS } from '../helpers/patience.js';

describe('TXT lookups through the configured DNS servers', () => {
  let dns: TestDnsServer;
  beforeAll(async () => { dns = await startDnsServer(); });
  afterAll(() => dns?.close());

  it('answers every TXT record of the name, each record\'s strings joined', async () => {
    dns.records.set('_gatehouse-verification.records.example', ['v=spf1 -all', 'gatehouse-domain-verification=abc']);
    const lookup = createTxtLookup({ servers: [dns.address], timeoutMs: PATIENCE_MS });
    expect(await lookup('_gatehouse-verification.records.example')).toEqual({ records: ['v=spf1 -all', 'gatehouse-domain-verification=abc'] });
  });

  it('answers no records for a name that does not exist', async () => {
    const lookup = createTxtLookup({ servers: [dns.address], timeoutMs: PATIENCE_MS });
    expect(await lookup('_gatehouse-verification.nowhere.example')).toEqual({ records: [] });
  });

  it('answers the error, never throws, when the server fails, is unreachable or never answers', async () => {
    const lookup = createTxtLookup({ servers: [dns.address], timeoutMs: 300 });
    dns.mode = 'servfail';
    try {
      expect(await lookup('_gatehouse-verification.any.example')).toEqual({ error: 'ESERVFAIL' });
      dns.mode = 'silent';
      const started = performance.now();
      expect(await lookup('_gatehouse-verification.any.example')).toEqual({ error: 'ETIMEOUT' });
      expect(performance.now() - started).toBeGreaterThanOrEqual(250); // bounded by the timeout, not by c-ares' own retries
    } finally {
      dns.mode = 'answer';
    }
    const closed = await startDnsServer();
    await closed.close();
    expect(await createTxtLookup({ servers: [closed.address], timeoutMs: PATIENCE_MS })('_gatehouse-verification.any.example')).toEqual({ error: 'ECONNREFUSED' });
  });
});

describe('domain names', () => {
  it.each([
    ['Example.COM', 'example.com'], ['http://user:pw@Sub.Example.com:8080/a?b#c', 'sub.example.com'], ['example.com.', 'example.com'],
    ['ÆRØ.dk', 'xn--r-3fa9c.dk'], ['münchen.de', 'xn--mnchen-3ya.de'], ['a.b.c.example.org', 'a.b.c.example.org'],
  ])('normalizes %j to %s', (typed, domain) => {
    expect(normalizeDomain(typed)).toEqual({ domain });
  });

  it.each([
    ['', 'invalid'], ['.', 'invalid'], ['exa_mple.com', 'invalid'], ['a..b.com', 'invalid'], [`${'a'.repeat(64)}.com`, 'invalid'],
    ['10.0.0.1', 'invalid'], ['[2001:db8::1]', 'invalid'], ['com', 'public_suffix'], ['dk', 'public_suffix'], ['co.uk', 'public_suffix'],
    ['com.au', 'public_suffix'], ['gmail.com', 'free_mail'], ['proton.me', 'free_mail'],
  ])('refuses %j (%s)', (typed, reason) => {
    expect(normalizeDomain(typed)).toMatchObject({ reason });
  });

  it('takes the domain of an email after its last @', () => {
    expect(emailDomain('"a@b"@acme.example')).toBe('acme.example');
  });
});

describe('GATEHOUSE_DNS_SERVERS', () => {
  it.each(['1.1.1.1', '127.0.0.1:5353', '::1', '[::1]:53', '2001:db8::1'])('accepts %s', (entry) => {
    expect(isDnsServerEntry(entry)).toBe(true);
  });
  it.each(['dns.google', '1.1.1.1:0', '1.1.1.1:70000', '[::1', '1.1.1', 'localhost:53'])('refuses %s', (entry) => {
    expect(isDnsServerEntry(entry)).toBe(false);
  });
  it('is a comma-separated list, empty for the system resolvers, and a bad entry stops the start', () => {
    expect(loadConfig({ GATEHOUSE_DNS_SERVERS: '127.0.0.1:5353, [::1]:53' }).dnsServers).toEqual(['127.0.0.1:5353', '[::1]:53']);
    expect(loadConfig({}).dnsServers).toEqual([]);
    expect(() => loadConfig({ GATEHOUSE_DNS_SERVERS: 'dns.google' })).toThrow(/GATEHOUSE_DNS_SERVERS: must be comma-separated DNS server addresses/);
  });
});
