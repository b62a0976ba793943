import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startSamlIdp, type SamlIdp } from '../helpers/saml-idp.js';
import { startServerPair, type ServerPair } from '../helpers/server-pair.js';
import { LANDING, APP_ORIGIN } from '../oauth/support.js';
import { authnRequestOf, BROWSER_COOKIE } from '../sso/saml-support.js';

// Two real server processes on one PostgreSQL: a SAML response posted to both at once signs in exactly once.
const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

describe.skipIf(!TEST_DATABASE_URL)('SAML single use across server processes (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  let dns: TestDnsServer;
  let idp: SamlIdp;
  beforeAll(async () => {
    dns = await startDnsServer();
    idp = await startSamlIdp();
    pair = await startServerPair(TEST_DATABASE_URL!, { GATEHOUSE_DNS_SERVERS: dns.address });
  });
  afterAll(async () => { await pair?.stop(); await idp?.stop(); await dns?.close(); });

  it('answers one of many concurrent posts of the same response with a session, on whichever process, and the rest 400', async () => {
    const env = await pair.environment();
    const api = (method: string, path: string, body?: unknown) => pair.serverApi(pair.a, env, method, path, body);
    expect((await api('PUT', '/allowed-origins', { origins: [APP_ORIGIN] })).status).toBe(200);
    const org = (await api('POST', '/organizations', { name: 'Acme' })).json();
    const domain = (await api('POST', `/organizations/${org.id}/domains`, { domain: 'race.example' })).json();
    dns.records.set(domain.verification.name, [domain.verification.value]);
    expect((await api('POST', `/organizations/${org.id}/domains/${domain.id}/verify`)).status).toBe(200);
    const connection = (await api('POST', `/organizations/${org.id}/sso-connections`, { type: 'saml', idpMetadataXml: idp.metadataXml })).json();

    const started = await pair.client(pair.b, env, 'GET', `/auth/sso/authorize?email=ann%40race.example&redirect_url=${encodeURIComponent(LANDING)}`);
    expect(started.status).toBe(302);
    const browser = /__sso_browser=([^;]+)/.exec(String(started.headers['set-cookie']))![1]!;
    const samlResponse = await idp.response({ acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: authnRequestOf(started.headers.location as string).id,
      user: { nameId: 'ann@race.example', email: 'ann@race.example' } });

    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => pair.call(pair.roundRobin(i)!, {
      method: 'POST', path: `/_svc/auth/sso/${connection.id}/acs`, host: env.frontendHost,
      headers: { cookie: `${BROWSER_COOKIE}=${browser}`, origin: 'http://127.0.0.1:1' }, form: { SAMLResponse: samlResponse },
    })));

    const signedIn = answers.filter((res) => res.status === 303);
    expect(signedIn).toHaveLength(1);
    expect(signedIn[0]!.headers.location).toBe(LANDING);
    expect(String(signedIn[0]!.headers['set-cookie'])).toContain('__session=');
    expect(answers.filter((res) => res.status === 400 && res.json().properties.code === 'invalid_state')).toHaveLength(7);
    const db = new pg.Client({ connectionString: pair.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query('select count(*)::int as n from sessions where environment_id = $1', [env.id]);
      expect(rows[0].n).toBe(1);
      const users = await db.query('select count(*)::int as n from users where environment_id = $1', [env.id]);
      expect(users.rows[0].n).toBe(1);
    } finally {
      await db.end();
    }
  });
});
