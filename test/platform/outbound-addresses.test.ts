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
