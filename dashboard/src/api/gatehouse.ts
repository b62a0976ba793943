/**
 * Every call the dashboard makes to Gatehouse, in one module: the admin API and the Server API through the
 * typed SDK, authenticated by the operator's HttpOnly session cookie (the Server API also gets the
 * environment's id in a header, instead of a secret key), and the operator's own sign-in.
 */
import { createAdminClient, createServerClient, GatehouseError, type components } from '@gatehouse/sdk';

export type User = components['schemas']['User'];
export type Session = components['schemas']['Session'];
export type Environment = components['schemas']['Environment'];
export type Operator = components['schemas']['Operator'];
export { GatehouseError };

const baseUrl = window.location.origin;

export const adminApi = createAdminClient({ baseUrl, operatorSession: true });
export const serverApi = (environmentId: string) => createServerClient({ baseUrl, operator: { environmentId } });

/** The operator's sign-in (then, with a second factor enrolled, its code step) and session; the cookie is HttpOnly. */
export const operatorSession = {
  signIn: (email: string, password: string) => adminApi.signInOperator({ email, password }),
  secondFactor: (challengeToken: string, code: string) => adminApi.verifyOperatorSecondFactor({ challengeToken, code }),
  /** The signed-in operator, or null when no session cookie (or an ended one) came with the request. */
  current: async (): Promise<Operator | null> => {
    try {
      return (await adminApi.getCurrentOperator()).operator;
    } catch (err) {
      if (err instanceof GatehouseError && err.status === 401) return null;
      throw err;
    }
  },
  signOut: () => adminApi.signOutOperator(),
  /** Uses up the one-time link of an operator created without a password. */
  setPassword: (token: string, password: string) => adminApi.setOperatorPassword({ token, password }),
};
