import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { VNode } from 'preact';
import type { SessionContext } from '../platform/http/planes.js';
import type { Outcome } from './service.js';
import type { PageContext } from './views/layout.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The page may run the passkeys script: its CSP allows `script-src 'self'` (and `connect-src 'self'`) while passkeys are enabled. */
    passkeyScript?: true;
  }
}

/** The hosted pages' Fastify scope: its CSP, CSRF and Origin hooks and its error page apply to every route added to it. */
export type PagesApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What every group of pages (sign-in, account, security) renders and answers with. */
export interface PageKit {
  /** The language, branding and CSRF token of the request; `keepRedirect: false` drops `redirect_url` from the carried query. */
  context(request: FastifyRequest, reply: FastifyReply, keepRedirect?: boolean): Promise<PageContext>;
  send(reply: FastifyReply, page: VNode, status?: number, headers?: Record<string, string | string[]>): FastifyReply;
  /** The page a step's outcome leads to; a refusal renders `form` with its message. */
  answer(reply: FastifyReply, ctx: PageContext, outcome: Outcome, form: (error?: string) => VNode | Promise<VNode>, next?: (email: string) => VNode): Promise<unknown>;
  /**
   * The cookie's live session; without one the browser has been answered 303 to /sign-in (coming back to
   * `back`, by default this page: a form's post names the page it was on) and undefined is returned.
   */
  signedInSession(request: FastifyRequest, reply: FastifyReply, back?: string): Promise<SessionContext | undefined>;
}
