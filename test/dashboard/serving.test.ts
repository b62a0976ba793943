import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_BUILD, DASHBOARD_CSP, dashboardRoutes } from '../../src/dashboard/routes.js';
import { registerProblemHandlers } from '../../src/platform/http/problem.js';
import { registerSecurityHeaders } from '../../src/platform/http/security-headers.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const INDEX = '<!doctype html><html lang="en"><head><script type="module" src="/dashboard/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>';
const SCRIPT = 'console.log("dashboard")';

/** A built dashboard of two files, so these tests do not depend on `npm run build:dashboard` having run. */
function fakeBuild() {
  const root = mkdtempSync(join(tmpdir(), 'dashboard-build-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), INDEX);
  writeFileSync(join(root, 'assets', 'index-abc123.js'), SCRIPT);
  return `${root}/`;
}

/** As buildApp registers it: the security headers and the problem handler first, then the dashboard. */
async function serve(build: string) {
  const app = Fastify();
  registerSecurityHeaders(app);
  registerProblemHandlers(app);
  await app.register(dashboardRoutes(build));
  return app;
}

describe('serving the operator dashboard at /dashboard', () => {
  let build: string;
  let app: FastifyInstance;
  beforeAll(async () => {
    build = fakeBuild();
    app = await serve(build);
  });
  afterAll(async () => {
    await app.close();
    rmSync(build, { recursive: true, force: true });
  });

  it("answers /dashboard with the app's index.html, never cached, under a CSP that runs only its own scripts", async () => {
    const res = await app.inject({ method: 'GET', url: '/dashboard' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toBe(INDEX);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    const directives = Object.fromEntries(DASHBOARD_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives).toMatchObject({
      'default-src': "'none'", 'script-src': "'self'", 'style-src': "'self'", 'connect-src': "'self'", 'frame-ancestors': "'none'", 'base-uri': "'none'",
    });
    expect(DASHBOARD_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it.each(['/dashboard/', '/dashboard/sign-in', '/dashboard/environments/0193e0a0-0000-7000-8000-000000000001/users?email=ada',
    '/dashboard/environments/0193e0a0-0000-7000-8000-000000000001/users/0193e0a0-0000-7000-8000-000000000002'])(
    'answers the deep link %s with index.html (the app routes in the browser)', async (url) => {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(INDEX);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    });

  it('serves a hashed asset with a year-long immutable cache', async () => {
    const res = await app.inject({ method: 'GET', url: '/dashboard/assets/index-abc123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(SCRIPT);
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('answers a missing asset with a 404 problem, not index.html', async () => {
    const res = await app.inject({ method: 'GET', url: '/dashboard/assets/index-gone.js' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).not.toContain('<!doctype html>');
  });

  it('refuses a path that climbs out of the assets folder', async () => {
    const res = await app.inject({ method: 'GET', url: '/dashboard/assets/..%2findex.html' });
    expect(res.statusCode).toBe(404);
  });
});

describe('the dashboard before it is built', () => {
  it('answers 503 dashboard_not_built, saying how to build it', async () => {
    const app = await serve(join(tmpdir(), 'no-such-dashboard-build/'));
    const res = await app.inject({ method: 'GET', url: '/dashboard/environments' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 503, properties: { code: 'dashboard_not_built' } });
    expect(res.json().detail).toContain('npm run build:dashboard');
    await app.close();
  });
});

describe('the dashboard in the whole app', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t?.close());

  it('is served from the build npm ci made, on the base host beside the APIs, which keep their own CSP', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/dashboard/environments' });
    expect(page.statusCode, 'dashboard/dist is missing: run npm run build:dashboard').toBe(200);
    expect(page.body).toBe(readFileSync(join(DASHBOARD_BUILD, 'index.html'), 'utf8'));
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    const api = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(api.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it('keeps the first screen under 300 KB gzip: index.html and every script and stylesheet it loads', async () => {
    const index = readFileSync(join(DASHBOARD_BUILD, 'index.html'), 'utf8');
    const assets = [...index.matchAll(/(?:src|href)="\/dashboard\/(assets\/[^"]+)"/g)].map((m) => m[1]);
    expect(assets.some((asset) => asset.endsWith('.js'))).toBe(true);
    let gzipped = gzipSync(index).length;
    for (const asset of assets) {
      const res = await t.app.inject({ method: 'GET', url: `/dashboard/${asset}` });
      expect(res.statusCode).toBe(200);
      gzipped += gzipSync(res.rawPayload).length;
    }
    expect(gzipped).toBeLessThan(300 * 1024);
  });
});
