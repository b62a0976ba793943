import type { Db } from '../../platform/db/database.js';
import type { ClientEnvironment } from '../../platform/http/planes.js';
import type { User } from '../../users/schemas.js';
import type { RequestContext } from '../../platform/caller.js';
import { OAuthFailure } from '../../oauth/relying-party.js';
import type { OAuthService } from '../../oauth/service.js';
import { ssoEnforcedFor } from '../../sso/service.js';
import type { SsoSignIn } from '../../sso/sign-in.js';
import type { SecondFactorStep } from './second-factor.js';

/** Sign-in with an external OAuth2/OIDC provider: the dance is oauth/'s; the session (or the second step) it ends in is decided here. */
export function createExternalSignIn({ oauth, secondStep }: { oauth: OAuthService; secondStep: Pick<SecondFactorStep, 'challengeOrSession'> }) {
  return {
    providers: (environmentId: string) => oauth.listEnabled(environmentId),
    authorize: (env: ClientEnvironment, providerId: string, redirectUrl: string) => oauth.authorize(env, providerId, redirectUrl),
    callback: (env: ClientEnvironment, providerId: string, query: Record<string, string | undefined>, rawQuery: string, browserToken: string | undefined, context: RequestContext) =>
      oauth.callback(env, providerId, query, rawQuery, browserToken, context, async (trx, user) => {
        // Thrown in the callback's transaction: a user it would have created or linked is not kept either.
        if (await ssoEnforcedFor(trx, env.id, user.email)) throw new OAuthFailure('sso_required', "the user's email domain must sign in through its organization's SSO connection");
        return secondStep.challengeOrSession(trx, env, user, context, 'oauth', { provider: providerId });
      }),
  };
}
export type ExternalSignIn = ReturnType<typeof createExternalSignIn>;

/** Enterprise sign-in through an organization's SSO connection: the protocol is sso/'s; the session (or the second step) is decided here. */
export function createEnterpriseSignIn({ sso, secondStep }: { sso: SsoSignIn; secondStep: Pick<SecondFactorStep, 'challengeOrSession'> }) {
  const signIn = (env: ClientEnvironment, connectionId: string, context: RequestContext) => (trx: Db, user: User) =>
    secondStep.challengeOrSession(trx, env, user, context, 'sso', { connectionId });
  return {
    authorize: sso.authorize,
    metadata: sso.metadata,
    acs: (env: ClientEnvironment, connectionId: string, samlResponse: string, browserToken: string | undefined, context: RequestContext) =>
      sso.acs(env, connectionId, samlResponse, browserToken, context, signIn(env, connectionId, context)),
    callback: (env: ClientEnvironment, connectionId: string, query: Record<string, string | undefined>, rawQuery: string, browserToken: string | undefined, context: RequestContext) =>
      sso.callback(env, connectionId, query, rawQuery, browserToken, context, signIn(env, connectionId, context)),
  };
}
export type EnterpriseSignIn = ReturnType<typeof createEnterpriseSignIn>;
