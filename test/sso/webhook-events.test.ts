import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createOrganization } from '../organizations/support.js';
import { givenEndpoint } from '../webhooks/given-endpoint.js';
import { connectionsPath, createConnection, idpMetadataXml } from './support.js';

describe('webhook events of enterprise sign-in configuration', () => {
  let t: TestApp;
  // No job worker: the events are read as the change's transaction wrote them.
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }); });
  afterAll(() => t?.close());

  // The test clock stands still, so events of one test share their time: they are compared as a set.
  const eventsOf = (environmentId: string) =>
    t.db.selectFrom('webhook_events').select(['type', 'data']).where('environment_id', '=', environmentId).orderBy('type').execute();

  it('makes sso_connection.created, updated and deleted with the organization first and the connection', async () => {
    const env = await t.given.environment();
    await givenEndpoint(t.db, env, 'http://127.0.0.1:9/never', { eventTypes: ['sso_connection.created', 'sso_connection.updated', 'sso_connection.deleted'] });
    const org = await createOrganization(t, env);
    const connection = await createConnection(t, env, org.id, { type: 'saml', idpMetadataXml: idpMetadataXml() });
    await t.server(env).patch(`${connectionsPath(org.id)}/${connection.id}`, { enforced: true });
    await t.server(env).delete(`${connectionsPath(org.id)}/${connection.id}`);

    const events = await eventsOf(env.id);
    expect(events.map((e) => e.type)).toEqual(['sso_connection.created', 'sso_connection.deleted', 'sso_connection.updated']);
    expect(events[2]!.data).toMatchObject({
      object: 'organization', id: org.id, targets: [{ type: 'organization', id: org.id }, { type: 'sso_connection', id: connection.id }],
      metadata: { type: 'saml', changedFields: ['enforced'] },
    });
  });

  it('makes scim_directory.created, updated, token_rotated and deleted, never carrying the token', async () => {
    const env = await t.given.environment();
    await givenEndpoint(t.db, env, 'http://127.0.0.1:9/never');
    const org = await createOrganization(t, env);
    const directory = (await t.server(env).post(`/organizations/${org.id}/directories`, { name: 'Okta' })).json();
    await t.server(env).patch(`/organizations/${org.id}/directories/${directory.id}`, { name: 'Okta (prod)' });
    const rotated = (await t.server(env).post(`/organizations/${org.id}/directories/${directory.id}/token`)).json();
    await t.server(env).delete(`/organizations/${org.id}/directories/${directory.id}`);

    const events = (await eventsOf(env.id)).filter((e) => e.type.startsWith('scim_directory.'));
    expect(events.map((e) => e.type)).toEqual(['scim_directory.created', 'scim_directory.deleted', 'scim_directory.token_rotated', 'scim_directory.updated']);
    expect(events[0]!.data).toMatchObject({ object: 'scim_directory', id: directory.id, targets: [{ type: 'scim_directory', id: directory.id }, { type: 'organization', id: org.id }] });
    expect(JSON.stringify(events)).not.toContain(directory.token);
    expect(JSON.stringify(events)).not.toContain(rotated.token);
  });
});
