import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem, givenCast, minted, redeem } from './support.js';

// An impersonated session could revoke the real user's sessions and delete their organizations.
describe('what an impersonated session may not do', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  async function impersonating() {
    const cast = await givenCast(t);
    const own = await t.given.session(cast.env, cast.target);
    const { token } = await minted(t, cast);
    const res = await redeem(t, cast.env, token);
    expect(res.statusCode, res.body).toBe(200);
    return { ...cast, own, as: t.client(cast.env, { token: res.json().sessionToken }) };
  }

  it("ends none of the user's sessions: 403 impersonation_restricted, and the session still works", async () => {
    const { env, own, as } = await impersonating();
    expectProblem(await as.delete(`/sessions/${own.id}`), 403, 'impersonation_restricted');
    expect((await t.client(env, { token: own.token }).get('/me')).statusCode).toBe(200);
  });

  it("deletes none of the user's organizations: 403 impersonation_restricted, and the organization stays", async () => {
    const { env, target, as } = await impersonating();
    const org = await t.server(env).post('/organizations', { name: 'Kept', createdBy: target.id });
    expect(org.statusCode, org.body).toBe(201);
    expectProblem(await as.delete(`/organizations/${org.json().id}`), 403, 'impersonation_restricted');
    expect((await t.server(env).get(`/organizations/${org.json().id}`)).statusCode).toBe(200);
  });

  it('still reads what the user sees and signs itself out', async () => {
    const { as } = await impersonating();
    expect((await as.get('/me')).statusCode).toBe(200);
    expect((await as.get('/sessions')).statusCode).toBe(200);
    expect((await as.post('/auth/sign-out')).statusCode).toBe(204);
  });
});
