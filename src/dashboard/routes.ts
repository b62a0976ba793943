import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { ProblemError } from '../platform/http/problem.js';

/** Where `npm run build:dashboard` (run by `npm ci`) writes the app: dashboard/dist, beside src/ and dist/. */
export const DASHBOARD_BUILD = fileURLToPath(new URL('../../dashboard/dist/', import.meta.url));

/**
 * The app runs only the scripts and styles it was built with, talks only to this origin, and may not be
 * framed: no inline script, no third-party request.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "font-src 'self'", "connect-src 'self'",
  "manifest-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

/** Vite names every asset by its content's hash, so an asset never changes under its name. */
const ASSET_CACHE = 'public, max-age=31536000, immutable';

const withPageHeaders = (reply: FastifyReply) => reply.header('content-security-policy', DASHBOARD_CSP).header('referrer-policy', 'no-referrer');

/**
 * The operator dashboard at /dashboard: its hashed assets under /dashboard/assets/ (a missing one is a 404),
 * and index.html, never cached, for /dashboard and every deep link under it (the app routes in the browser).
 */
export function dashboardRoutes(build = DASHBOARD_BUILD): FastifyPluginAsync {
  return async (app) => {
    const indexPath = `${build}index.html`;
    if (!existsSync(indexPath)) {
      const notBuilt = () => {
        throw new ProblemError(503, 'dashboard_not_built', 'The dashboard has not been built: run `npm run build:dashboard` (npm ci runs it).');
      };
      app.get('/dashboard', { schema: { hide: true } }, notBuilt);
      app.get('/dashboard/*', { schema: { hide: true } }, notBuilt);
      return;
    }
    const index = readFileSync(indexPath);
    await app.register(fastifyStatic, {
      root: `${build}assets`, prefix: '/dashboard/assets/', decorateReply: false, index: false, cacheControl: false,
      setHeaders: (res) => {
        res.setHeader('cache-control', ASSET_CACHE);
        res.setHeader('content-security-policy', DASHBOARD_CSP);
      },
    });
    const page = async (_request: unknown, reply: FastifyReply) =>
      withPageHeaders(reply).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(index);
    app.get('/dashboard', { schema: { hide: true } }, page);
    app.get('/dashboard/*', { schema: { hide: true } }, page);
  };
}
