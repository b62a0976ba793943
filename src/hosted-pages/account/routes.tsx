/** @jsxImportSource preact */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { VNode } from 'preact';
import type { Static, TSchema } from 'typebox';
import { requestContext } from '../../platform/http/planes.js';
import { ProblemError } from '../../platform/http/problem.js';
import { CATALOGUES, isLocale, problemMessageKey, type MessageKey } from '../../platform/i18n/catalogue.js';
import { clearSessionCookie } from '../../sessions/cookies.js';
import type { PageKit, PagesApp } from '../kit.js';
import { PageQuery } from '../schemas.js';
import type { PageContext } from '../views/layout.js';
import {
  AccountQuery, AddEmailForm, CodeForm, CsrfForm, DataRequestForm, DeleteAccountForm, IdParams, ProfileForm, ReauthenticateForm,
} from './schemas.js';
import type { AccountPages, AccountVisitor, StepOutcome } from './service.js';
import { DataTab, DeleteAccountPage, ProfileTab, RestrictedTab, type ReauthReturn, type TabState } from './views.js';

const hidden = { hide: true } as const;

/** A refusal's message: the account pages' own wording when they have one, else the pages' general one for the code. */
function refusalMessage(ctx: PageContext, code: string): string {
  const own = `account.error.${code}`;
  return ctx.t(own in CATALOGUES.en ? (own as MessageKey) : problemMessageKey(code));
}

/** The notice a step's 303 names in `?notice=`: only the catalogue's account notices, so a link cannot put words on the page. */
function noticeOf(ctx: PageContext, name: string | undefined): string | undefined {
  const key = `account.notice.${name}`;
  return name && key in CATALOGUES.en ? ctx.t(key as MessageKey) : undefined;
}

/** The account pages (contract §3e): /account (profile, addresses, identities, organizations) and /account/data (data requests, deletion). */
export function accountPages(app: PagesApp, kit: PageKit, account: AccountPages) {
  /** The signed-in visitor; without a session the browser is on its way to /sign-in, to come back to `back`. */
  async function visitorOf(request: FastifyRequest, reply: FastifyReply, back?: string): Promise<AccountVisitor | undefined> {
    const session = await kit.signedInSession(request, reply, back);
    return session && { env: request.clientEnvironment, session, context: requestContext(request) };
  }

  /** The page of a tab (or the deletion step) with its current data; a session that may not read it (enrolment only) sees why instead. */
  async function tabPage(visitor: AccountVisitor, tab: ReauthReturn, state: TabState): Promise<{ page: VNode; refused?: ProblemError }> {
    try {
      switch (tab) {
        case '/account': return { page: <ProfileTab {...state} data={await account.profile(visitor)} /> };
        case '/account/data': return { page: <DataTab {...state} data={await account.data(visitor)} /> };
        case '/account/delete': return { page: <DeleteAccountPage {...state} /> };
      }
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      const current = tab === '/account' ? '/account' : '/account/data';
      return { page: <RestrictedTab ctx={state.ctx} current={current} error={refusalMessage(state.ctx, err.code)} />, refused: err };
    }
  }

  async function showTab(reply: FastifyReply, visitor: AccountVisitor, tab: ReauthReturn, state: TabState, status = 200, headers: Record<string, string | string[]> = {}) {
    const { page, refused } = await tabPage(visitor, tab, state);
    return refused ? kit.send(reply, page, refused.status, refused.headers) : kit.send(reply, page, status, headers);
  }

  /** The same page again with the refusal beside it (and the password form when a recent sign-in is what is missing). */
  async function showRefusal(reply: FastifyReply, ctx: PageContext, visitor: AccountVisitor, tab: ReauthReturn, problem: ProblemError) {
    const reauth = problem.code === 'reauthentication_required' || problem.code === 'invalid_password';
    return showTab(reply, visitor, tab, { ctx, error: refusalMessage(ctx, problem.code), reauth }, problem.status, problem.headers);
  }

  /** Post/Redirect/Get: the tab's address with the carried query and the step's notice. */
  function tabUrl(ctx: PageContext, tab: ReauthReturn, notice: string) {
    const query = new URLSearchParams(ctx.carried.slice(1));
    query.set('notice', notice);
    return `${tab}?${query}`;
  }

  for (const tab of ['/account', '/account/data', '/account/delete'] as const) {
    app.get(tab, { schema: { ...hidden, querystring: AccountQuery } }, async (request, reply) => {
      const visitor = await visitorOf(request, reply);
      if (!visitor) return reply;
      const ctx = await kit.context(request, reply);
      return showTab(reply, visitor, tab, { ctx, notice: noticeOf(ctx, request.query.notice) });
    });
  }

  /**
   * One form's POST route: the step runs as the signed-in visitor, then 303 back to the tab with its notice,
   * or the tab again with the refusal. Without a session the browser signs in and comes back to the tab.
   */
  function action<Body extends TSchema, Params extends TSchema>(path: string, body: Body, params: Params | undefined, tab: ReauthReturn, notice: string,
    run: (visitor: AccountVisitor, request: FastifyRequest<{ Body: Static<Body>; Params: Static<Params> }>) => Promise<StepOutcome>) {
    app.post(path, { schema: { ...hidden, body, querystring: PageQuery, ...(params && { params }) } }, async (request, reply) => {
      const visitor = await visitorOf(request, reply, tab);
      if (!visitor) return reply;
      const outcome = await run(visitor, request as never);
      const ctx = await kit.context(request, reply);
      if (outcome.kind === 'done') return reply.redirect(tabUrl(ctx, tab, notice), 303);
      return showRefusal(reply, ctx, visitor, tab, outcome.problem);
    });
  }

  action('/account/profile', ProfileForm, undefined, '/account', 'profileSaved', (v, { body }) =>
    account.updateProfile(v, { firstName: body.firstName, lastName: body.lastName, locale: body.locale }));
  action('/account/email-addresses', AddEmailForm, undefined, '/account', 'emailAdded', (v, { body }) => account.addEmailAddress(v, body.email));
  action('/account/email-addresses/:id/verify', CodeForm, IdParams, '/account', 'emailVerified', (v, { body, params }) => account.verifyEmailAddress(v, params.id, body.code));
  action('/account/email-addresses/:id/make-primary', CsrfForm, IdParams, '/account', 'primaryChanged', (v, { params }) => account.makePrimary(v, params.id));
  action('/account/email-addresses/:id/remove', CsrfForm, IdParams, '/account', 'emailRemoved', (v, { params }) => account.removeEmailAddress(v, params.id));
  action('/account/identities/:id/unlink', CsrfForm, IdParams, '/account', 'identityUnlinked', (v, { params }) => account.unlinkIdentity(v, params.id));
  action('/account/organizations/:id/leave', CsrfForm, IdParams, '/account', 'organizationLeft', (v, { params }) => account.leaveOrganization(v, params.id));
  app.post('/account/data-requests', { schema: { ...hidden, body: DataRequestForm, querystring: PageQuery } }, async (request, reply) => {
    const visitor = await visitorOf(request, reply, '/account/data');
    if (!visitor) return reply;
    const outcome = await account.requestData(visitor, request.body.type);
    const ctx = await kit.context(request, reply);
    if (outcome.kind === 'refused') return showRefusal(reply, ctx, visitor, '/account/data', outcome.problem);
    return reply.redirect(tabUrl(ctx, '/account/data', request.body.type === 'export' ? 'exportRequested' : 'erasureRequested'), 303);
  });
  action('/account/data-requests/:id/cancel', CsrfForm, IdParams, '/account/data', 'requestCancelled', (v, { params }) => account.cancelDataRequest(v, params.id));

  // The archive, as GET /_svc/me/data-requests/{id}/download answers it; a refusal is shown on the data tab.
  app.get('/account/data-requests/:id/download', { schema: { ...hidden, params: IdParams, querystring: PageQuery } }, async (request, reply) => {
    const visitor = await visitorOf(request, reply, '/account/data');
    if (!visitor) return reply;
    try {
      const archive = await account.download(visitor, request.params.id);
      return reply.header('content-disposition', `attachment; filename="data-export-${request.params.id}.json"`).header('cache-control', 'no-store')
        .type('application/json; charset=utf-8').send(JSON.stringify(archive));
    } catch (err) {
      if (!(err instanceof ProblemError) || err.status >= 500) throw err;
      return showRefusal(reply, await kit.context(request, reply), visitor, '/account/data', err);
    }
  });

  // The password again, then back to the page whose change asked for it, to make the change again.
  app.post('/account/reauthenticate', { schema: { ...hidden, body: ReauthenticateForm, querystring: PageQuery } }, async (request, reply) => {
    const { then, password } = request.body;
    const visitor = await visitorOf(request, reply, then);
    if (!visitor) return reply;
    const outcome = await account.reauthenticate(visitor, password);
    const ctx = await kit.context(request, reply);
    if (outcome.kind === 'done') return reply.redirect(tabUrl(ctx, then, 'reauthenticated'), 303);
    return showRefusal(reply, ctx, visitor, then, outcome.problem);
  });

  // DELETE /_svc/me from the confirmation step: the cookie is cleared and the browser leaves as from /sign-out.
  app.post('/account/delete', { schema: { ...hidden, body: DeleteAccountForm, querystring: PageQuery } }, async (request, reply) => {
    const visitor = await visitorOf(request, reply, '/account/delete');
    if (!visitor) return reply;
    const ctx = await kit.context(request, reply);
    if (request.body.confirm !== 'true') return kit.send(reply, <DeleteAccountPage ctx={ctx} error={ctx.t('account.delete.confirmRequired')} />, 400);
    const outcome = await account.deleteAccount(visitor);
    if (outcome.kind === 'refused') return showRefusal(reply, ctx, visitor, '/account/delete', outcome.problem);
    clearSessionCookie(reply);
    const { locale } = request.query;
    const signIn = isLocale(locale) ? `/sign-in?${new URLSearchParams({ locale })}` : '/sign-in';
    return reply.redirect(visitor.env.settings.hostedPages.afterSignOutUrl ?? signIn, 303);
  });
}
