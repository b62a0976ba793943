/**
 * Every call the dashboard makes to Gatehouse, in one module: the admin API and the Server API through the
 * typed SDK, authenticated by the operator's HttpOnly session cookie (the Server API also gets the
 * environment's id in a header, instead of a secret key), and the operator's own sign-in.
 */
import { createAdminClient, createServerClient, GatehouseError, type components } from '@gatehouse/sdk';

export type User = components['schemas']['User'];
export type Session = components['schemas']['Session'];
export type Environment = components['schemas']['Environment'];
export { GatehouseError };

const baseUrl = window.location.origin;

export const adminApi = createAdminClient({ baseUrl, operatorSession: true });
export const serverApi = (environmentId: string) => createServerClient({ baseUrl, operator: { environmentId } });

// The operator's sign-in and session (contract §3e). These four operations are not in the SDK's generated
// methods yet (they arrive with the operators' routes); when they are, these become adminApi.signInOperator,
// .verifyOperatorSecondFactor, .getCurrentOperator and .signOutOperator.
const OPERATOR_SESSIONS = '/api/admin/v1/operator-sessions';

export interface Operator { id: string; email: string }
export type SignInAnswer = { mfaRequired: true; challengeToken: string; factors: string[] } | { mfaRequired?: undefined; operator: Operator };

async function send<T>(method: string, path: string, body?: object): Promise<T> {
  const response = await fetch(path, {
    method, credentials: 'same-origin', ...(body && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  if (response.status === 204) return undefined as T;
  const answer = await response.json().catch(() => ({}));
  if (response.ok) return answer as T;
  const problem = answer as { detail?: string; title?: string; instance?: string; properties?: { code?: string; errors?: { path: string; message: string }[] } };
  throw new GatehouseError(response.status, problem.properties?.code ?? `http_${response.status}`, problem.detail ?? problem.title ?? response.statusText,
    problem.properties?.errors ?? [], null, problem.instance ?? null);
}

export const operatorSession = {
  signIn: (email: string, password: string) => send<SignInAnswer>('POST', OPERATOR_SESSIONS, { email, password }),
  secondFactor: (challengeToken: string, code: string) => send<{ operator: Operator }>('POST', `${OPERATOR_SESSIONS}/mfa`, { challengeToken, code }),
  /** The signed-in operator, or null when no session cookie (or an ended one) came with the request. */
  current: async () => {
    try {
      return (await send<{ operator: Operator }>('GET', `${OPERATOR_SESSIONS}/current`)).operator;
    } catch (err) {
      if (err instanceof GatehouseError && err.status === 401) return null;
      throw err;
    }
  },
  signOut: () => send<void>('DELETE', `${OPERATOR_SESSIONS}/current`),
};
