import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import type { TestDnsServer } from '../helpers/dns-server.js';
import { PASSWORD } from '../helpers/given.js';
import { startScriptableProvider } from '../helpers/scriptable-provider.js';
import { invite } from '../invitations/support.js';
import { callbackError, givenScriptedEnvironment, scriptedSignIn } from '../oauth/support.js';
import { createOrganization } from '../organizations/support.js';
import { passkeySignIn, registerPasskey } from '../passkeys/support.js';
import {
  CONNECTION_KEYS, connectionsPath, createConnection, expectProblem, givenOrganizationWithDomain, idpMetadataXml, startAppWithDns, TEST_IDP_CERTIFICATE,
} from './support.js';

const OIDC = { type: 'oidc', name: 'Entra ID', issuer: 'https://login.microsoftonline.com/tenant/v2.0', clientId: 'client-1', clientSecret: 'secret-1' };

describe('Server API: SSO connections', () => {
  let t: TestApp;
  let dns: TestDnsServer;
  let metadataServer: Server;
  let metadataUrl: string;
  beforeAll(async () => {
    ({ t, dns } = await startAppWithDns());
    metadataServer = createServer((req, res) => {
      if (req.url === '/metadata') return res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(idpMetadataXml({ entityId: 'https://idp.by-url.example' }));
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => metadataServer.listen(0, '127.0.0.1', resolve));
    metadataUrl = `http://127.0.0.1:${(metadataServer.address() as AddressInfo).port}`;
  });
  afterAll(async () => { await t?.close(); await dns?.close(); metadataServer?.close(); });

  describe('SAML', () => {
    it('reads the IdP from its metadata XML and answers the service provider values to enter at the IdP', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);

      const created = await createConnection(t, env, org.id, { type: 'saml', name: 'Okta', idpMetadataXml: idpMetadataXml() });

      expect(Object.keys(created).sort()).toEqual(CONNECTION_KEYS);
      const base = `http://${env.frontendHost}/_svc/auth/sso/${created.id}`;
      expect(created).toMatchObject({
        organizationId: org.id, type: 'saml', name: 'Okta', enabled: true, enforced: false, groupsAttribute: 'groups', groupRoles: {},
        spEntityId: `${base}/metadata`, acsUrl: `${base}/acs`, metadataUrl: `${base}/metadata`,
        idpEntityId: 'https://idp.acme.example/saml', idpSsoUrl: 'https://idp.acme.example/sso', idpMetadataUrl: null, idpCertificateCount: 1,
        issuer: null, clientId: null, scopes: null, redirectUri: null,
      });
      expect((await t.server(env).get(`${connectionsPath(org.id)}/${created.id}`)).json()).toEqual(created);
      expect((await t.server(env).get(connectionsPath(org.id))).json()).toEqual({ items: [created] });
    });

    it('fetches the metadata from idpMetadataUrl, and refuses an unreachable one with 422 idp_metadata_unavailable', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const created = await createConnection(t, env, org.id, { type: 'saml', idpMetadataUrl: `${metadataUrl}/metadata` });
      expect(created).toMatchObject({ idpEntityId: 'https://idp.by-url.example', idpMetadataUrl: `${metadataUrl}/metadata`, name: 'SAML' });

      const missing = await t.server(env).post(connectionsPath(org.id), { type: 'saml', idpMetadataUrl: `${metadataUrl}/gone` });
      expectProblem(missing, 422, 'idp_metadata_unavailable');
      expect(missing.json().detail).toContain('answered 404');
      expect((await t.server(env).get(connectionsPath(org.id))).json().items).toHaveLength(1);
    });

    it('never fetches idpMetadataUrl from a link-local or cloud-metadata address: 422 idp_metadata_unavailable, nothing stored', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const refused = await t.server(env).post(connectionsPath(org.id), { type: 'saml', idpMetadataUrl: 'https://169.254.169.254/latest/meta-data' });
      expectProblem(refused, 422, 'idp_metadata_unavailable');
      expect(refused.json().detail).toBe('The IdP metadata at https://169.254.169.254/latest/meta-data could not be read: '
        + '169.254.169.254 is a link-local or cloud-metadata address, never an identity provider');
      expect((await t.server(env).get(connectionsPath(org.id))).json().items).toEqual([]);
    });

    it('takes the IdP field by field: entity ID, SSO URL and a PEM certificate', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const created = await createConnection(t, env, org.id, {
        type: 'saml', idpEntityId: 'urn:acme:idp', idpSsoUrl: 'https://idp.acme.example/sso', idpCertificate: TEST_IDP_CERTIFICATE,
      });
      expect(created).toMatchObject({ idpEntityId: 'urn:acme:idp', idpSsoUrl: 'https://idp.acme.example/sso', idpCertificateCount: 1 });
    });

    it.each([
      ['XML that is not well-formed', { idpMetadataXml: '<md:EntityDescriptor' }, '/body/idpMetadataXml', 'not well-formed'],
      ['metadata without the HTTP-Redirect binding', { idpMetadataXml: idpMetadataXml({ bindings: ['urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'] }) }, '/body/idpMetadataXml', 'HTTP-Redirect'],
      ['metadata with only an encryption key', { idpMetadataXml: idpMetadataXml({ use: 'encryption' }) }, '/body/idpMetadataXml', 'signing certificate'],
      ['metadata with a broken certificate', { idpMetadataXml: idpMetadataXml({ certificate: 'MIIBbroken' }) }, '/body/idpMetadataXml', 'not a valid X.509'],
      ['no IdP at all', {}, '/body/idpMetadataXml', 'give idpMetadataXml'],
      ['a certificate that is not one', { idpEntityId: 'urn:x', idpSsoUrl: 'https://idp.example/sso', idpCertificate: 'hello' }, '/body/idpCertificate', 'X.509'],
      ['an SSO URL over plain http', { idpEntityId: 'urn:x', idpSsoUrl: 'http://idp.example/sso', idpCertificate: TEST_IDP_CERTIFICATE }, '/body/idpSsoUrl', 'https'],
    ])('refuses %s with 400 naming the field, storing nothing', async (_case, body, path, message) => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const res = await t.server(env).post(connectionsPath(org.id), { type: 'saml', ...body });
      expectProblem(res, 400, 'invalid_request');
      expect(res.json().properties.errors).toEqual([expect.objectContaining({ path, message: expect.stringContaining(message) })]);
      expect((await t.server(env).get(connectionsPath(org.id))).json().items).toEqual([]);
    });
  });

  it('refuses a connection of one type carrying the other type\'s fields, and an OpenID Connect one without its client', async () => {
    const env = await t.given.environment();
    const org = await createOrganization(t, env);
    const mixed = await t.server(env).post(connectionsPath(org.id), { type: 'saml', idpMetadataXml: idpMetadataXml(), clientId: 'x' });
    expectProblem(mixed, 400, 'invalid_request');
    expect(mixed.json().properties.errors).toEqual([{ path: '/body/clientId', message: 'is not a field of a saml connection' }]);
    const incomplete = await t.server(env).post(connectionsPath(org.id), { type: 'oidc', issuer: OIDC.issuer });
    expectProblem(incomplete, 400, 'invalid_request');
    expect(incomplete.json().properties.errors).toEqual([
      { path: '/body/clientId', message: 'is required for an oidc connection' }, { path: '/body/clientSecret', message: 'is required for an oidc connection' },
    ]);
    expect((await t.server(env).get(connectionsPath(org.id))).json().items).toEqual([]);
  });

  describe('OpenID Connect', () => {
    it('stores the client secret sealed and never answers it; the redirect URI is the callback', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const created = await createConnection(t, env, org.id, OIDC);
      expect(created).toMatchObject({
        type: 'oidc', issuer: OIDC.issuer, clientId: 'client-1', scopes: ['openid', 'email', 'profile'],
        redirectUri: `http://${env.frontendHost}/_svc/auth/sso/${created.id}/callback`, spEntityId: null, acsUrl: null, idpEntityId: null,
      });
      expect(JSON.stringify(created)).not.toContain('secret-1');
      const row = await t.db.selectFrom('sso_connections').select('client_secret_sealed').where('id', '=', created.id).executeTakeFirstOrThrow();
      expect(row.client_secret_sealed!.toString('latin1')).not.toContain('secret-1');
    });
  });

  describe('PATCH and DELETE', () => {
    it('changes the fields given, refuses fields of the other type, and deletes', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const saml = await createConnection(t, env, org.id, { type: 'saml', idpMetadataXml: idpMetadataXml() });
      const one = `${connectionsPath(org.id)}/${saml.id}`;

      const patched = await t.server(env).patch(one, { enforced: true, enabled: false, groupRoles: { Admins: 'admin' }, idpSsoUrl: 'https://idp.acme.example/sso2' });
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json()).toMatchObject({ enforced: true, enabled: false, groupRoles: { Admins: 'admin' }, idpSsoUrl: 'https://idp.acme.example/sso2', idpEntityId: 'https://idp.acme.example/saml' });

      const foreign = await t.server(env).patch(one, { clientSecret: 'x' });
      expectProblem(foreign, 400, 'invalid_request');
      expect(foreign.json().properties.errors).toEqual([{ path: '/body/clientSecret', message: 'is not a field of a saml connection' }]);
      expectProblem(await t.server(env).patch(one, { groupRoles: { Admins: 'superuser' } }), 400, 'invalid_role');

      expect((await t.server(env).delete(one)).statusCode).toBe(204);
      expectProblem(await t.server(env).get(one), 404, 'resource_not_found');
      expectProblem(await t.server(env).delete(one), 404, 'resource_not_found');
    });

    it('records created, updated and deleted with the organization and the connection as targets, never the secret', async () => {
      const env = await t.given.environment();
      const org = await createOrganization(t, env);
      const oidc = await createConnection(t, env, org.id, OIDC);
      await t.server(env).patch(`${connectionsPath(org.id)}/${oidc.id}`, { clientSecret: 'secret-2', enforced: true });
      await t.server(env).delete(`${connectionsPath(org.id)}/${oidc.id}`);

      const events = (await t.server(env).get(`/audit-events?targetType=sso_connection&targetId=${oidc.id}`)).json().items;
      const targets = [{ type: 'organization', id: org.id }, { type: 'sso_connection', id: oidc.id }];
      expect(events.map((e: { action: string; metadata: unknown; targets: unknown }) => [e.action, e.metadata, e.targets])).toEqual([
        ['sso_connection.created', { type: 'oidc', name: 'Entra ID', enforced: false }, targets],
        ['sso_connection.updated', { type: 'oidc', changedFields: ['clientSecret', 'enforced'] }, targets],
        ['sso_connection.deleted', { type: 'oidc', name: 'Entra ID' }, targets],
      ]);
      expect(JSON.stringify(events)).not.toContain('secret-');
    });
  });

  describe('tenancy', () => {
    it("answers 404 for another organization's or another environment's connection", async () => {
      const env = await t.given.environment();
      const other = await t.given.environment();
      const org = await createOrganization(t, env);
      const sibling = await createOrganization(t, env);
      const created = await createConnection(t, env, org.id, OIDC);

      expectProblem(await t.server(env).get(`${connectionsPath(sibling.id)}/${created.id}`), 404, 'resource_not_found');
      expectProblem(await t.server(env).patch(`${connectionsPath(sibling.id)}/${created.id}`, { enforced: true }), 404, 'resource_not_found');
      expectProblem(await t.server(env).delete(`${connectionsPath(sibling.id)}/${created.id}`), 404, 'resource_not_found');
      expectProblem(await t.server(other).get(`${connectionsPath(org.id)}/${created.id}`), 404, 'organization_not_found');
      expect((await t.server(env).get(connectionsPath(sibling.id))).json().items).toEqual([]);
      expect((await t.server(env).get(`${connectionsPath(org.id)}/${created.id}`)).json().enforced).toBe(false);
    });
  });

  describe('enforced connections', () => {
    it("refuse password sign-in and sign-up to the organization's verified domains with 403 sso_required, and no one else", async () => {
      const env = await t.given.environment();
      const org = await givenOrganizationWithDomain(t, env, dns, 'enforced.example');
      const insider = await t.given.user(env, { email: 'ann@enforced.example' });
      const outsider = await t.given.user(env, { email: 'bob@elsewhere.example' });
      const connection = await createConnection(t, env, org.id, { ...OIDC, enforced: true });

      expectProblem(await t.client(env).post('/auth/sign-in', { email: insider.email, password: PASSWORD }), 403, 'sso_required');
      expectProblem(await t.client(env).post('/auth/sign-in', { email: 'Nobody@Enforced.Example', password: 'wrong one' }), 403, 'sso_required');
      expectProblem(await t.client(env).post('/auth/sign-up', { email: 'new@enforced.example', password: PASSWORD }), 403, 'sso_required');
      expect((await t.client(env).post('/auth/sign-in', { email: outsider.email, password: PASSWORD })).statusCode).toBe(200);
      expect(await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).where('email', '=', 'new@enforced.example').executeTakeFirst()).toBeUndefined();

      await t.server(env).patch(`${connectionsPath(org.id)}/${connection.id}`, { enabled: false });
      expect((await t.client(env).post('/auth/sign-in', { email: insider.email, password: PASSWORD })).statusCode).toBe(200);
    });

    it('mail no reset code to an enforced domain and refuse a reset there, so a password cannot come back that way', async () => {
      const env = await t.given.environment();
      const org = await givenOrganizationWithDomain(t, env, dns, 'reset-enforced.example');
      const insider = await t.given.user(env, { email: 'cat@reset-enforced.example' });
      await createConnection(t, env, org.id, { ...OIDC, enforced: true });

      expect((await t.client(env).post('/auth/forgot-password', { email: insider.email })).statusCode).toBe(202);
      await t.app.settled();
      expect(await t.outbox(env, insider.email!)).toEqual([]);
      expectProblem(await t.client(env).post('/auth/reset-password', { email: insider.email, code: '123456', newPassword: 'another long password' }), 403, 'sso_required');
    });

    it("send a social sign-in with the domain's email back with sso_required, creating nobody and linking nothing", async () => {
      const fake = await startScriptableProvider();
      try {
        const env = await givenScriptedEnvironment(t, fake);
        const org = await givenOrganizationWithDomain(t, env, dns, 'social-enforced.example');
        const insider = await t.given.user(env, { email: 'dan@social-enforced.example' });
        await createConnection(t, env, org.id, { ...OIDC, enforced: true });

        fake.script.claims = { ...fake.script.claims, sub: 'dan', email: insider.email, email_verified: true };
        const linking = await scriptedSignIn(t, env);
        fake.script.claims = { ...fake.script.claims, sub: 'eve', email: 'eve@social-enforced.example', email_verified: true };
        const creating = await scriptedSignIn(t, env);
        fake.script.claims = { ...fake.script.claims, sub: 'fay', email: 'fay@elsewhere.example', email_verified: true };
        const outside = await scriptedSignIn(t, env);

        expect([callbackError(linking), callbackError(creating), callbackError(outside)]).toEqual(['sso_required', 'sso_required', null]);
        expect([linking, creating].map((res) => res.cookies.find((c) => c.name === '__session'))).toEqual([undefined, undefined]);
        const users = await t.db.selectFrom('users').select('email').where('environment_id', '=', env.id).orderBy('email').execute();
        expect(users.map((u) => u.email)).toEqual(['dan@social-enforced.example', 'fay@elsewhere.example']);
        const identities = await t.db.selectFrom('user_identities').select('subject').where('environment_id', '=', env.id).execute();
        expect(identities).toEqual([{ subject: 'fay' }]);
      } finally {
        await fake.close();
      }
    });

    it("refuse a passkey sign-in of a user at the domain with 403 sso_required, starting no session", async () => {
      const env = await t.given.environment();
      const org = await givenOrganizationWithDomain(t, env, dns, 'passkey-enforced.example');
      const insider = await t.given.user(env, { email: 'gil@passkey-enforced.example' });
      const { authenticator } = await registerPasskey(t, env, (await t.given.session(env, insider)).token);
      const before = await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).execute();
      expect((await passkeySignIn(t, env, authenticator)).statusCode).toBe(200);
      const connection = await createConnection(t, env, org.id, { ...OIDC, enforced: true });

      expectProblem(await passkeySignIn(t, env, authenticator), 403, 'sso_required');
      expect(await t.db.selectFrom('sessions').select('id').where('environment_id', '=', env.id).execute()).toHaveLength(before.length + 1);

      await t.server(env).patch(`${connectionsPath(org.id)}/${connection.id}`, { enforced: false });
      expect((await passkeySignIn(t, env, authenticator)).statusCode).toBe(200);
    });

    it('refuse a password sign-up from an environment or an organization invitation to the domain with 403 sso_required, leaving both pending', async () => {
      const env = await t.given.environment({ signUpUrl: 'https://app.example.com/sign-up' });
      const org = await givenOrganizationWithDomain(t, env, dns, 'invite-enforced.example');
      await createConnection(t, env, org.id, { ...OIDC, enforced: true });
      const { invitation, token } = await invite(t, env, { email: 'hal@invite-enforced.example' });
      const byOrganization = await t.server(env).post(`/organizations/${org.id}/invitations`, { email: 'ida@invite-enforced.example', role: 'member' });
      expect(byOrganization.statusCode, byOrganization.body).toBe(201);

      const body = { password: PASSWORD, legalConsentAccepted: true };
      expectProblem(await t.client(env).post('/auth/invitation/password-signup?_is_native=true', { ...body, token }), 403, 'sso_required');
      expectProblem(await t.client(env).post('/auth/organization-invitation/password-signup?_is_native=true', { ...body, token: byOrganization.json().token }), 403, 'sso_required');

      expect(await t.db.selectFrom('users').select('id').where('environment_id', '=', env.id).execute()).toEqual([]);
      expect((await t.server(env).get(`/invitations/${invitation.id}`)).json().status).toBe('PENDING');
      const pending = await t.db.selectFrom('organization_invitations').select('status').where('environment_id', '=', env.id).execute();
      expect(pending).toEqual([{ status: 'PENDING' }]);
    });
  });
});
