import type { ClientEnvironment } from '../../platform/http/planes.js';
import type { RequestContext } from '../../platform/caller.js';
import type { OAuthService } from '../../oauth/service.js';
import type { SecondFactorStep } from './second-factor.js';

/** Sign-in with an external OAuth2/OIDC provider: the dance is oauth/'s; the session (or the second step) it ends in is decided here. */
export function createExternalSignIn({ oauth, secondStep }: { oauth: OAuthService; secondStep: Pick<SecondFactorStep, 'challengeOrSession'> }) {
  return {
    providers: (environmentId: string) => oauth.listEnabled(environmentId),
    authorize: (env: ClientEnvironment, providerId: string, redirectUrl: string) => oauth.authorize(env, providerId, redirectUrl),
    callback: (env: ClientEnvironment, providerId: string, query: Record<string, string | undefined>, rawQuery: string, browserToken: string | undefined, context: RequestContext) =>
      oauth.callback(env, providerId, query, rawQuery, browserToken, context, (trx, user) =>
        secondStep.challengeOrSession(trx, env, user, context, 'oauth', { provider: providerId })),
  };
}
export type ExternalSignIn = ReturnType<typeof createExternalSignIn>;
