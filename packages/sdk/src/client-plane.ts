import { requireOption } from './errors.js';
import { OPERATIONS, type OperationId } from './generated/operations.js';
import { createTransport, planeMethods, type TransportOptions } from './transport.js';
import type { PlaneMethods } from './types.js';

export interface ClientPlaneOptions extends Omit<TransportOptions, 'baseUrl' | 'headers'> {
  /** The environment's frontend URL, e.g. https://auth.example.com. */
  frontendUrl: string;
  /**
   * Browsers keep the session in the HttpOnly cookie (the default). A native app passes `native: true`:
   * sign-in answers the session token, which the client then sends as a bearer token.
   */
  native?: boolean | undefined;
  /** A native app's stored session token, to resume a session. */
  sessionToken?: string | undefined;
}

/**
 * The client plane for browsers and native apps: sign-up, sign-in, sign-out, the current user, sessions and
 * every other client operation, one method each. In native mode the session token is kept and sent.
 */
export function createClientPlane(options: ClientPlaneOptions) {
  requireOption('createClientPlane', options, 'frontendUrl', true);
  let sessionToken = options.sessionToken;
  const call = createTransport({
    ...options, baseUrl: `${options.frontendUrl.replace(/\/$/, '')}`, credentials: options.credentials ?? (options.native ? undefined : 'include'),
    headers: (): Record<string, string> => (sessionToken ? { authorization: `Bearer ${sessionToken}` } : {}),
  });
  const methods = planeMethods(call, 'client');
  const wrapped = Object.fromEntries(Object.entries(methods).map(([id, method]) => [id, async (input?: Record<string, unknown>, callOptions?: object) => {
    // The operations that start a session come from the server's routes (generated), so a new sign-in path needs no list here.
    const native = options.native && OPERATIONS[id as OperationId].startsSession;
    const answer = await method(native ? { ...input, _is_native: true } : input, callOptions) as { sessionToken?: string } | undefined;
    if (answer?.sessionToken) sessionToken = answer.sessionToken;
    if (id === 'signOut') sessionToken = undefined;
    return answer;
  }]));
  return {
    ...(wrapped as unknown as PlaneMethods<'client'>),
    /** The session token a native sign-in answered (undefined in a browser, where the cookie holds it). */
    sessionToken: () => sessionToken,
  };
}
export type ClientPlane = ReturnType<typeof createClientPlane>;
