import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';
import { append, customerEvents, eventBody } from './support.js';

// RFC 3339 allows a leap second, which a JavaScript Date cannot hold: it used to reach the code as Invalid Date and answer 500.
const LEAP_SECOND = '2016-12-31T23:59:60Z';

describe('leap-second timestamps', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  it('refuses one in occurredAt with 400 invalid_request naming the field, and stores nothing', async () => {
    const env = await t.given.environment();
    const body = expectProblem(await append(t, env, eventBody(t, { occurredAt: LEAP_SECOND })), 400, 'invalid_request');
    expect(JSON.stringify(body.properties.errors)).toContain('occurredAt');
    expect(await customerEvents(t, env)).toEqual([]);
  });

  it('refuses one as a search bound with 400 invalid_request', async () => {
    const env = await t.given.environment();
    for (const bound of ['occurredAfter', 'occurredBefore']) {
      expectProblem(await t.server(env).get(`/audit-events?${bound}=${encodeURIComponent(LEAP_SECOND)}`), 400, 'invalid_request');
    }
  });

  it('still takes the last ordinary second of a day', async () => {
    const env = await t.given.environment();
    expect((await t.server(env).get(`/audit-events?occurredAfter=${encodeURIComponent('2016-12-31T23:59:59Z')}`)).statusCode).toBe(200);
  });
});
