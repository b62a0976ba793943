import type { FactorsService } from '../../factors/service.js';
import type { OperatorAccounts } from '../../operators/service.js';
import type { OperatorSecondFactorBody, OperatorSignInBody } from '../../operators/schemas.js';
import type { Caller, RequestContext } from '../../platform/caller.js';
import type { OperatorAuthenticator, OperatorContext } from '../../platform/http/planes.js';
import type { SessionsService } from '../../sessions/service.js';
import type { SignInResult } from './issue-session.js';
import type { PasswordAuthService } from './passwords.js';
import type { SecondFactorStep } from './second-factor.js';

export interface OperatorSessionsDeps {
  accounts: OperatorAccounts;
  passwords: Pick<PasswordAuthService, 'signIn'>;
  secondStep: Pick<SecondFactorStep, 'verify'>;
  sessions: Pick<SessionsService, 'authenticate' | 'revoke'>;
  factors: Pick<FactorsService, 'enrolTotp' | 'confirmTotp' | 'overview'>;
  /** Whether an id names a customer's environment (the Server API's Gatehouse-Environment header). */
  isCustomerEnvironment(id: string): Promise<boolean>;
}

/**
 * Operators signing in to the dashboard: the end-users' password sign-in, second step, sessions and factors,
 * run in the operators' reserved environment, so the rules (policy, lockout, rate limits) are the very same
 * code, but for the lockout counting per client network (SignInOptions.lockoutPerClient).
 */
export function createOperatorSessions({ accounts, passwords, secondStep, sessions, factors, isCustomerEnvironment }: OperatorSessionsDeps) {
  const authenticator: OperatorAuthenticator = {
    async authenticate(token: string): Promise<OperatorContext | undefined> {
      const session = await sessions.authenticate((await accounts.environment()).id, token);
      return session && { id: session.userId, sessionId: session.id };
    },
    isCustomerEnvironment,
  };

  return {
    authenticator,
    // Failures count per client network: whoever knows an operator's email cannot lock the operator out.
    signIn: async (body: OperatorSignInBody, context: RequestContext): Promise<SignInResult> =>
      passwords.signIn(await accounts.environment(), body, context, { lockoutPerClient: true }),
    verifySecondFactor: async (body: OperatorSecondFactorBody, context: RequestContext): Promise<SignInResult> =>
      secondStep.verify(await accounts.environment(), body, context),
    async current(operator: OperatorContext) {
      const env = await accounts.environment();
      const [found, mfa] = await Promise.all([accounts.get(operator.id), factors.overview(env.id, operator.id)]);
      return { operator: found, sessionId: operator.sessionId, secondFactorEnrolled: mfa.factors.length > 0 };
    },
    signOut: async (operator: OperatorContext, by: Caller) =>
      sessions.revoke((await accounts.environment()).id, operator.id, operator.sessionId, by, 'sign_out'),
    enrolTotp: async (operator: OperatorContext) => factors.enrolTotp(await accounts.environment(), operator.id),
    confirmTotp: async (operator: OperatorContext, factorId: string, code: string, by: Caller) =>
      factors.confirmTotp(await accounts.environment(), operator.id, operator.sessionId, factorId, code, by),
  };
}
export type OperatorSessions = ReturnType<typeof createOperatorSessions>;
