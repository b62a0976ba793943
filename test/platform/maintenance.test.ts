import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEmailedCodesService } from '../../src/auth/service/codes.js';
import { createEnvironmentsService } from '../../src/environments/service.js';
import { systemCaller } from '../../src/platform/caller.js';
import { createTestClock } from '../../src/platform/clock.js';
import { scheduleMaintenance } from '../../src/platform/maintenance.js';
import { createRateLimiter } from '../../src/platform/rate-limit.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { signUp } from '../helpers/flows.js';

const DAY = 86_400_000;
// Pruning is global (every environment), and under TEST_DATABASE_URL other test files share the
// database: these tests live in 2001 so their cut-offs can only ever reach their own rows.
const LONG_AGO = '2001-01-01T00:00:00.000Z';

describe('housekeeping of spent rate-limit windows and codes', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  const windowsOf = (environmentId: string) =>
    t.db.selectFrom('rate_limit_windows').select('bucket').where('environment_id', '=', environmentId).execute();
  const codesOf = (environmentId: string) =>
    t.db.selectFrom('verification_codes').select('user_id').where('environment_id', '=', environmentId).execute();

  it('deletes rate-limit windows that ended more than two days ago and keeps recent ones', async () => {
    const env = await t.given.environment();
    const clock = createTestClock(LONG_AGO);
    const limiter = createRateLimiter(t.db, clock);
    await limiter.hit(env.id, 'old', { max: 5, windowSeconds: 3600 });
    clock.advance(2 * DAY + 3_600_001);
    await limiter.hit(env.id, 'recent', { max: 5, windowSeconds: 3600 });

    await limiter.pruneOldWindows();

    expect(await windowsOf(env.id)).toEqual([{ bucket: 'recent' }]);
  });

  it('deletes verification codes a day past their expiry and keeps live ones', async () => {
    const env = await t.given.environment();
    t.clock.set(LONG_AGO);
    expect((await signUp(t, env, 'early@example.com')).statusCode).toBe(201);
    t.clock.advance(DAY + 10 * 60_000 + 1);
    expect((await signUp(t, env, 'late@example.com')).statusCode).toBe(201);
    const auth = createEmailedCodesService({
      db: t.db, clock: t.clock, mailer: { mode: 'catching', send: async () => {}, jobHandlers: {} },
      users: undefined as never, issueSession: undefined as never, background: undefined as never, secondStep: undefined as never, limiter: createRateLimiter(t.db, t.clock),
    });

    await auth.pruneExpiredCodes();

    const late = await t.server(env).get('/users?emailSearch=late%40example.com');
    expect(await codesOf(env.id)).toEqual([{ user_id: late.json().items[0].id }]);
  });

  it('refuses an IP window longer than a day in the settings, so pruning can never cut a live window', async () => {
    const environments = createEnvironmentsService({ db: t.db, clock: t.clock, defaultFrontendPort: 3000 });
    await expect(environments.create({ name: 'too-long', settings: { lockout: { ipWindowSeconds: 86_401 } } }, systemCaller('cli')))
      .rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });
});

describe('the maintenance schedule', () => {
  afterEach(() => { vi.useRealTimers(); });

  function fakeApp() {
    const hooks: Record<string, (() => Promise<void>)[]> = {};
    const warnings: unknown[] = [];
    return {
      hooks, warnings,
      addHook: (name: string, fn: () => Promise<void>) => { (hooks[name] ??= []).push(fn); },
      log: { warn: (...args: unknown[]) => { warnings.push(args); } },
    };
  }

  it('runs every task each interval once the app is ready, keeps going when one fails, and stops on close', async () => {
    vi.useFakeTimers();
    const app = fakeApp();
    const runs: string[] = [];
    scheduleMaintenance(app as never, {
      failing: async () => { runs.push('failing'); throw new Error('database down'); },
      pruning: async () => { runs.push('pruning'); },
    }, 1000);

    await vi.advanceTimersByTimeAsync(5000);
    expect(runs).toEqual([]);

    await app.hooks.onReady![0]();
    await vi.advanceTimersByTimeAsync(2000);
    expect(runs).toEqual(['failing', 'pruning', 'failing', 'pruning']);
    expect(app.warnings).toHaveLength(2);
    expect(JSON.stringify(app.warnings[0])).toContain('database down');

    await app.hooks.onClose![0]();
    await vi.advanceTimersByTimeAsync(5000);
    expect(runs).toHaveLength(4);
  });
});
