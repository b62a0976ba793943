/** @jsxImportSource preact */
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestContext } from '../../platform/http/planes.js';
import type { ProblemError } from '../../platform/http/problem.js';
import { CATALOGUES, problemMessageKey, type MessageKey, type Translate } from '../../platform/i18n/catalogue.js';
import { setSessionCookie } from '../../sessions/cookies.js';
import type { PageKit, PagesApp } from '../kit.js';
import { landing } from '../service.js';
import type { PageContext } from '../views/layout.js';
import {
  ChangePasswordForm, ConfirmTotpForm, CsrfOnly, FactorParams, PasskeyParams, PasskeySignInPost, ReauthenticateForm, RenamePasskeyForm, SecurityQuery, SessionParams,
} from './schemas.js';
import type { SecurityCaller, SecurityPages, Step } from './service.js';
import { BackupCodesPage, SECURITY_PATH, SecurityPage, TotpEnrolmentPage } from './views.js';

const hidden = { hide: true } as const;
const PASSKEY_SCRIPT = { passkeyScript: true } as const;
const page = { ...hidden, querystring: SecurityQuery };

/** A catalogue key by name, when the catalogue has it. */
const keyIfAny = (key: string): MessageKey | undefined => (key in CATALOGUES.en ? key as MessageKey : undefined);

/** What the tab says of a problem: its own message for the security codes, else the pages' one. */
const problemMessage = (t: Translate, code: string) => t(keyIfAny(`security.error.${code}`) ?? problemMessageKey(code));

/** The security tab (/account/security) and the passkey sign-in of /sign-in. */
export function securityPages(app: PagesApp, kit: PageKit, security: SecurityPages) {
  /** The signed-in caller; without a session the browser is sent to sign in and back to the tab (a form's POST cannot be repeated). */
  async function caller(request: FastifyRequest, reply: FastifyReply): Promise<SecurityCaller | undefined> {
    // The tab carries redirect_url into its links like every page, so it is checked here as on every step.
    landing(request.clientEnvironment, (request.query as SecurityQuery).redirect_url);
    const session = await kit.signedInSession(request, reply, request.method === 'GET' ? request.url : SECURITY_PATH);
    return session && { env: request.clientEnvironment, session, context: requestContext(request) };
  }

  /** The tab, with a notice or a refusal (and the password check when the refusal asks for a recent sign-in). */
  async function tab(reply: FastifyReply, who: SecurityCaller, ctx: PageContext,
    outcome: { done?: string; problem?: ProblemError | string; reauthenticate?: boolean } = {}) {
    const { env } = who;
    const code = typeof outcome.problem === 'string' ? outcome.problem : outcome.problem?.code;
    const doneKey = outcome.done ? keyIfAny(`security.done.${outcome.done}`) : undefined;
    const page = (
      <SecurityPage ctx={ctx} overview={await security.overview(who)} currentSessionId={who.session.id}
        features={{ totp: env.settings.mfa.policy !== 'off', passkeys: env.settings.passkeys.enabled }}
        notice={doneKey && ctx.t(doneKey)} error={code && problemMessage(ctx.t, code)} reauthenticate={outcome.reauthenticate ?? code === 'reauthentication_required'} />
    );
    const status = typeof outcome.problem === 'object' ? outcome.problem.status : 200;
    return kit.send(reply, page, status, typeof outcome.problem === 'object' ? outcome.problem.headers : {});
  }

  /** Post/Redirect/Get: a step done goes back to the tab with its notice; a refusal is the tab again with the alert. */
  async function afterStep(request: FastifyRequest, reply: FastifyReply, who: SecurityCaller, result: Step<unknown>, done: string) {
    if (result.kind === 'refused') return tab(reply, who, await kit.context(request, reply), { problem: result.problem });
    const query = new URLSearchParams(request.query as Record<string, string>);
    query.delete('problem');
    query.set('done', done);
    return reply.redirect(`${SECURITY_PATH}?${query}`, 303);
  }

  app.get(SECURITY_PATH, { config: PASSKEY_SCRIPT, schema: { ...hidden, querystring: SecurityQuery } }, async (request, reply) => {
    const who = await caller(request, reply);
    if (!who) return reply;
    return tab(reply, who, await kit.context(request, reply), { done: request.query.done, problem: request.query.problem });
  });

  app.post(`${SECURITY_PATH}/password`, { config: PASSKEY_SCRIPT, schema: { ...page, body: ChangePasswordForm } }, async (request, reply) => {
    const who = await caller(request, reply);
    return who && afterStep(request, reply, who, await security.changePassword(who, request.body), 'password_changed');
  });

  app.post(`${SECURITY_PATH}/reauthenticate`, { config: PASSKEY_SCRIPT, schema: { ...page, body: ReauthenticateForm } }, async (request, reply) => {
    const who = await caller(request, reply);
    if (!who) return reply;
    const result = await security.reauthenticate(who, request.body.password);
    // A wrong password keeps the check on the page, so it can be tried again.
    if (result.kind === 'refused' && result.problem.code === 'invalid_password') {
      return tab(reply, who, await kit.context(request, reply), { problem: result.problem, reauthenticate: true });
    }
    return afterStep(request, reply, who, result, 'reauthenticated');
  });

  app.post(`${SECURITY_PATH}/totp`, { config: PASSKEY_SCRIPT, schema: { ...page, body: CsrfOnly } }, async (request, reply) => {
    const who = await caller(request, reply);
    if (!who) return reply;
    const result = await security.enrolTotp(who);
    const ctx = await kit.context(request, reply);
    if (result.kind === 'refused') return tab(reply, who, ctx, { problem: result.problem });
    return kit.send(reply, <TotpEnrolmentPage ctx={ctx} factorId={result.value.factorId} enrolment={result.value} />);
  });

  app.post(`${SECURITY_PATH}/totp/confirm`, { config: PASSKEY_SCRIPT, schema: { ...page, body: ConfirmTotpForm } }, async (request, reply) => {
    const who = await caller(request, reply);
    if (!who) return reply;
    const { factorId, code } = request.body;
    const result = await security.confirmTotp(who, factorId, code);
    const ctx = await kit.context(request, reply);
    if (result.kind === 'done') return kit.send(reply, <BackupCodesPage ctx={ctx} codes={result.value.backupCodes} />);
    if (result.problem.code !== 'invalid_code') return tab(reply, who, ctx, { problem: result.problem });
    return kit.send(reply, <TotpEnrolmentPage ctx={ctx} factorId={factorId} error={problemMessage(ctx.t, result.problem.code)} />, result.problem.status);
  });

  app.post(`${SECURITY_PATH}/backup-codes`, { config: PASSKEY_SCRIPT, schema: { ...page, body: CsrfOnly } }, async (request, reply) => {
    const who = await caller(request, reply);
    if (!who) return reply;
    const result = await security.regenerateBackupCodes(who);
    const ctx = await kit.context(request, reply);
    if (result.kind === 'refused') return tab(reply, who, ctx, { problem: result.problem });
    return kit.send(reply, <BackupCodesPage ctx={ctx} codes={result.value.backupCodes} />);
  });

  app.post(`${SECURITY_PATH}/factors/:factorId/remove`, { config: PASSKEY_SCRIPT, schema: { ...page, body: CsrfOnly, params: FactorParams } }, async (request, reply) => {
    const who = await caller(request, reply);
    return who && afterStep(request, reply, who, await security.removeFactor(who, request.params.factorId), 'factor_removed');
  });

  app.post(`${SECURITY_PATH}/passkeys/:passkeyId/rename`, { config: PASSKEY_SCRIPT, schema: { ...page, body: RenamePasskeyForm, params: PasskeyParams } }, async (request, reply) => {
    const who = await caller(request, reply);
    return who && afterStep(request, reply, who, await security.renamePasskey(who, request.params.passkeyId, request.body.name), 'passkey_renamed');
  });

  app.post(`${SECURITY_PATH}/passkeys/:passkeyId/remove`, { config: PASSKEY_SCRIPT, schema: { ...page, body: CsrfOnly, params: PasskeyParams } }, async (request, reply) => {
    const who = await caller(request, reply);
    return who && afterStep(request, reply, who, await security.removePasskey(who, request.params.passkeyId), 'passkey_removed');
  });

  app.post(`${SECURITY_PATH}/sessions/:sessionId/revoke`, { config: PASSKEY_SCRIPT, schema: { ...page, body: CsrfOnly, params: SessionParams } }, async (request, reply) => {
    const who = await caller(request, reply);
    return who && afterStep(request, reply, who, await security.revokeSession(who, request.params.sessionId), 'session_revoked');
  });

  /**
   * The passkeys script posts the assertion here (JSON, with the page's CSRF token): the cookie is set as the
   * password form's is, and the answer names the checked landing place the form would have answered 303 to.
   */
  app.post('/sign-in/passkey', { schema: { ...hidden, body: PasskeySignInPost, querystring: SecurityQuery } }, async (request, reply) => {
    const to = landing(request.clientEnvironment, request.query.redirect_url);
    const outcome = await security.signInWithPasskey(request.clientEnvironment, request.body.response as AuthenticationResponseJSON, to, requestContext(request));
    if (outcome.kind === 'signed_in') {
      setSessionCookie(reply, outcome.signedIn.token, outcome.signedIn.session.expiresAt);
      return reply.send({ location: outcome.to });
    }
    if (outcome.kind !== 'refused') throw new Error(`a passkey sign-in ended in ${outcome.kind}`);
    const ctx = await kit.context(request, reply);
    return reply.code(outcome.problem.status).headers(outcome.problem.headers).send({ code: outcome.problem.code, error: problemMessage(ctx.t, outcome.problem.code) });
  });
}
