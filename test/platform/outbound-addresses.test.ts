import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRelyingParty, OAuthFailure } from '../../src/oauth/relying-party.js';
import { systemClock } from '../../src/platform/clock.js';
import { guardedFetch, identityProviderFetch, RefusedTarget, restrictedAddress } from '../../src/platform/net/outbound.js';

describe('where Gatehouse fetches from identity providers (SAML metadata, OpenID and OAuth endpoints)', () => {
  let server: Server;
  let port: number;
  const paths: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => { paths.push(req.url!); res.end('metadata'); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('reaches a provider on this host or a private network, as self-hosted IdPs are', async () => {
    const res = await identityProviderFetch(`http://localhost:${port}/private-idp`);
    expect([res.status, await res.text()]).toEqual([200, 'metadata']);
    expect(paths).toContain('/private-idp');
  });

  it('never connects to a link-local or cloud-metadata address written in the URL', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://[fe80::1]/', 'http://[::ffff:169.254.169.254]/', 'http://100.100.100.200/', 'http://[fd00:ec2::254]/']) {
      const refused = await identityProviderFetch(url).catch((err: unknown) => err);
      expect([url, refused]).toEqual([url, expect.any(RefusedTarget)]);
      expect((refused as Error).message).toMatch(/is a link-local or cloud-metadata address, never an identity provider$/);
    }
  });

  it('checks the addresses a name resolves to, so a name cannot lead where an address may not', async () => {
    const loopbackRefused = guardedFetch((address) => (restrictedAddress(address) ? `${address} is refused here` : null));
    const refused = await loopbackRefused(`http://localhost:${port}/by-name`).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(RefusedTarget);
    expect((refused as Error).message).toMatch(/^localhost resolves only to refused addresses: .* is refused here$/);
    expect(paths).not.toContain('/by-name');
  });

  it('sends an OpenID sign-in at a cloud-metadata issuer back as provider_unavailable, naming the refusal, without discovery', async () => {
    const relyingParty = createRelyingParty({ clock: systemClock, timeoutSeconds: 5 });
    const provider = {
      key: 'metadata-issuer', type: 'oidc' as const, oidc: true, issuer: 'https://169.254.169.254', authorizationUrl: null, tokenUrl: null, userInfoUrl: null,
      scopes: ['openid'], clientId: 'c', clientSecret: () => 's',
    };
    const failure = await relyingParty.authorizationUrl(provider, 'https://app.example.com/callback', 'state').catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(OAuthFailure);
    expect((failure as OAuthFailure).code).toBe('provider_unavailable');
    expect((failure as OAuthFailure).message).toContain('169.254.169.254 is a link-local or cloud-metadata address, never an identity provider');
  });
});

describe('restrictedAddress: an IPv6 address that carries an IPv4 one is judged as that IPv4 address too, the stricter verdict holding', () => {
  it.each([
    // The IPv4 addresses themselves, for reference.
    ['169.254.169.254', 'metadata'], ['100.100.100.200', 'metadata'], ['127.0.0.1', 'private'], ['10.1.2.3', 'private'], ['192.168.1.2', 'private'], ['93.184.216.34', null],
    // IPv4-mapped ::ffff:a.b.c.d, in both notations.
    ['::ffff:169.254.169.254', 'metadata'], ['::ffff:a9fe:a9fe', 'metadata'], ['::ffff:10.0.0.1', 'private'], ['::ffff:93.184.216.34', null],
    // SIIT (IPv4-translated) ::ffff:0:a.b.c.d.
    ['::ffff:0:169.254.169.254', 'metadata'], ['::ffff:0:a9fe:a9fe', 'metadata'], ['::ffff:0:7f00:1', 'private'], ['::ffff:0:93.184.216.34', null],
    // IPv4-compatible ::a.b.c.d: private whatever it carries, metadata when it carries metadata; :: and ::1 are IPv6's own.
    ['::169.254.169.254', 'metadata'], ['::a9fe:a9fe', 'metadata'], ['::127.0.0.1', 'private'], ['::93.184.216.34', 'private'], ['::1', 'private'], ['::', 'private'],
    // NAT64, well-known prefix 64:ff9b::/96: private whatever it carries (a gateway of this network translates it), metadata when it carries metadata.
    ['64:ff9b::a9fe:a9fe', 'metadata'], ['64:ff9b::169.254.169.254', 'metadata'], ['64:ff9b::a64:101', 'private'], ['64:ff9b::5db8:d822', 'private'],
    // Local-use NAT64 64:ff9b:1::/48 (RFC 8215), the IPv4 address at each RFC 6052 position: /96, /64, /48.
    ['64:ff9b:1::a9fe:a9fe', 'metadata'], ['64:ff9b:1:0:a9:fea9:fe00:0', 'metadata'], ['64:ff9b:1:a9fe:a9:fe00::', 'metadata'], ['64:ff9b:1::5db8:d822', 'private'],
    // 6to4 2002:AABB:CCDD::/48.
    ['2002:a9fe:a9fe::1', 'metadata'], ['2002:a00:1::1', 'private'], ['2002:c0a8:102:1::1', 'private'], ['2002:5db8:d822::1', null],
    // Teredo 2001:0::/32: the client's address inverted in the last 32 bits.
    ['2001:0:4136:e378:8000:63bf:5601:5601', 'metadata'], ['2001:0:4136:e378:8000:63bf:3f57:fefd', 'private'], ['2001:0:4136:e378:8000:63bf:a247:27dd', null],
    // IPv6 ranges of their own, and addresses that carry nothing.
    ['fe80::1', 'metadata'], ['fd00:ec2::254', 'metadata'], ['fc00::1', 'private'], ['2606:4700::1111', null], ['2001:db8::a9fe:a9fe', null],
  ] as const)('%s is %s', (address, kind) => {
    expect(restrictedAddress(address)?.kind ?? null).toBe(kind);
  });

  it('names the IPv4 address it judged, so the refusal says where the request would have gone', async () => {
    expect(restrictedAddress('64:ff9b::a9fe:a9fe')).toEqual({ address: '64:ff9b::a9fe:a9fe (IPv4 169.254.169.254)', kind: 'metadata' });
    for (const url of ['http://[::169.254.169.254]/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://[64:ff9b:1::a9fe:a9fe]/', 'http://[2002:a9fe:a9fe::1]/', 'http://[::ffff:0:a9fe:a9fe]/',
      'http://[2001:0:4136:e378:8000:63bf:5601:5601]/']) {
      const refused = await identityProviderFetch(url).catch((err: unknown) => err);
      expect([url, refused]).toEqual([url, expect.any(RefusedTarget)]);
      expect((refused as Error).message).toMatch(/\(IPv4 169\.254\.169\.254\) is a link-local or cloud-metadata address, never an identity provider$/);
    }
  });
});
