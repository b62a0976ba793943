import type { EnvironmentsService, EnvironmentRecord } from '../environments/service.js';
import { operatorCaller, type Caller, type CallerContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import type { Db } from '../platform/db/database.js';
import type { PageQuery } from '../platform/http/common-schemas.js';
import { assertPasswordPolicy } from '../users/accounts.js';
import type { User } from '../users/schemas.js';
import type { UsersService } from '../users/service.js';
import { ProblemError } from '../platform/http/problem.js';
import { invalidSetPasswordToken, operatorExists } from './errors.js';
import type { CreatedOperator, CreateOperatorBody, Operator } from './schemas.js';
import { createPasswordTokensStore } from './store.js';

/** What the reserved environment of operators is called (environments.reserved). */
export const OPERATORS = 'operators';

/**
 * The operators' environment settings over the end-users' defaults: the same password policy and factors, no
 * email verification (an operator is created by another), no hosted pages nor impersonation, and 5 failures
 * instead of 10 before the lockout, as an operator's account reaches every environment. The operators' lockout
 * counts per client network (SignInOptions.lockoutPerClient): 5 failures an hour from one network.
 */
export const OPERATOR_SETTINGS = {
  emailVerificationRequired: false,
  lockout: { maxFailedAttempts: 5 },
  hostedPages: { enabled: false },
  impersonationEnabled: false,
  mfa: { policy: 'optional' },
};

/** How long the one-time link that sets a first password works. */
const SET_PASSWORD_LINK_MS = 7 * 86_400_000;

export const toOperator = (user: Pick<User, 'id' | 'email' | 'status' | 'createdAt'>): Operator =>
  ({ id: user.id, email: user.email ?? '', status: user.status, createdAt: user.createdAt });

export interface OperatorAccountsDeps {
  db: Db; clock: Clock;
  environments: Pick<EnvironmentsService, 'reserved' | 'findReserved'>;
  users: Pick<UsersService, 'create' | 'get' | 'list' | 'update'>;
}

/** Operators' accounts: users of the reserved environment `operators`, created by the CLI or the admin API. */
export function createOperatorAccounts({ db, clock, environments, users }: OperatorAccountsDeps) {
  const tokens = createPasswordTokensStore(db);
  let known: EnvironmentRecord | undefined;

  /** The operators' environment, made on first use. */
  async function environment(): Promise<EnvironmentRecord> {
    known ??= await environments.reserved(OPERATORS, OPERATOR_SETTINGS);
    return known;
  }

  return {
    environment,

    /** An operator with a password, or without one and a one-time link (under `baseUrl`) to set it. */
    async create(body: CreateOperatorBody, by: Caller, baseUrl: string): Promise<CreatedOperator> {
      const env = await environment();
      const user = await users.create(env.id, { email: body.email, ...(body.password !== undefined && { password: body.password }) }, by).catch((err: unknown) => {
        throw err instanceof ProblemError && err.code === 'email_taken' ? operatorExists() : err;
      });
      if (body.password !== undefined) return { operator: toOperator(user), setPasswordUrl: null };
      const token = randomToken('opw_');
      const now = clock.now();
      await tokens.insert(env.id, user.id, sha256(token), now, new Date(now.getTime() + SET_PASSWORD_LINK_MS));
      return { operator: toOperator(user), setPasswordUrl: `${baseUrl}/dashboard/set-password?token=${encodeURIComponent(token)}` };
    },

    async list(page: PageQuery) {
      const env = await environment();
      const result = await users.list(env.id, {}, page);
      return { ...result, items: result.items.map(toOperator) };
    },

    get: async (operatorId: string) => toOperator(await users.get((await environment()).id, operatorId)),

    /** Whether any active operator exists, without making the reserved environment (the first start asks). */
    async anyExists(): Promise<boolean> {
      const env = await environments.findReserved(OPERATORS);
      if (!env) return false;
      return (await users.list(env.id, { statuses: ['active'] }, { limit: 1 })).items.length > 0;
    },

    /** The one-time link's password: the policy is checked before the link is used up, so a refused password leaves it working. */
    async setPassword(token: string, password: string, context: CallerContext) {
      const env = await environment();
      const tokenHash = sha256(token);
      const operatorId = await tokens.findLive(env.id, tokenHash, clock.now());
      if (!operatorId) throw invalidSetPasswordToken();
      assertPasswordPolicy(password, env.settings, (await users.get(env.id, operatorId)).email);
      if (!(await tokens.use(env.id, tokenHash, clock.now()))) throw invalidSetPasswordToken();
      await users.update(env.id, operatorId, { password }, operatorCaller(operatorId, 'admin_api', context));
    },
  };
}
export type OperatorAccounts = ReturnType<typeof createOperatorAccounts>;
