import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { countInvitations, expectProblem, invite, invitingEnvironment, randomEmail } from './support.js';

describe("the environment's hourly invitation limit", () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const create = (env: Awaited<ReturnType<typeof invitingEnvironment>>) =>
    t.server(env).post('/invitations', { email: randomEmail(), publicMetadata: {}, privateMetadata: {} });

  it('admits invitationRateLimitPerHour invitations per clock hour, then answers 429 with Retry-After to the hour end, storing and mailing nothing', async () => {
    t.clock.set('2030-01-01T10:59:30.000Z');
    const env = await invitingEnvironment(t, { invitationRateLimitPerHour: 3 });
    for (let i = 0; i < 3; i++) expect((await create(env)).statusCode).toBe(201);
    const email = randomEmail();
    const res = await t.server(env).post('/invitations', { email, publicMetadata: {}, privateMetadata: {} });
    const body = expectProblem(res, 429, 'rate_limited');
    expect(res.headers['retry-after']).toBe('30');
    expect(body.properties.retryAfterSeconds).toBe(30);
    expect(await countInvitations(t, env)).toBe(3);
    expect(await t.outbox(env, email)).toEqual([]);

    t.clock.set('2030-01-01T11:00:00.000Z');
    expect((await create(env)).statusCode).toBe(201);
  });

  it('counts resends against the same limit', async () => {
    t.clock.set('2030-01-02T10:00:00.000Z');
    const env = await invitingEnvironment(t, { invitationRateLimitPerHour: 2 });
    const { invitation } = await invite(t, env);
    expect((await t.server(env).post(`/invitations/${invitation.id}/resend`)).statusCode).toBe(200);
    expectProblem(await t.server(env).post(`/invitations/${invitation.id}/resend`), 429, 'rate_limited');
    expectProblem(await create(env), 429, 'rate_limited');
    expect(await t.outbox(env, invitation.email)).toHaveLength(2);
  });

  it('does not count refused requests (no sign-up URL, existing account, invalid body)', async () => {
    t.clock.set('2030-01-03T10:00:00.000Z');
    const env = await invitingEnvironment(t, { invitationRateLimitPerHour: 1 });
    const user = await t.given.user(env);
    expectProblem(await t.server(env).post('/invitations', { email: user.email, publicMetadata: {}, privateMetadata: {} }), 409, 'email_taken');
    expectProblem(await t.server(env).post('/invitations', { email: 'bad', publicMetadata: {}, privateMetadata: {} }), 400, 'invalid_request');
    expect((await create(env)).statusCode).toBe(201);
  });

  it('is counted per environment', async () => {
    t.clock.set('2030-01-04T10:00:00.000Z');
    const [one, two] = [await invitingEnvironment(t, { invitationRateLimitPerHour: 1 }), await invitingEnvironment(t, { invitationRateLimitPerHour: 1 })];
    expect((await create(one)).statusCode).toBe(201);
    expect((await create(two)).statusCode).toBe(201);
    expectProblem(await create(one), 429, 'rate_limited');
  });

  it('admits nothing when the limit is 0', async () => {
    const env = await invitingEnvironment(t, { invitationRateLimitPerHour: 0 });
    expectProblem(await create(env), 429, 'rate_limited');
    expect(await countInvitations(t, env)).toBe(0);
  });
});
