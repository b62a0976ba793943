/** Who made a change, as Gatehouse's own audit trail records it. */
export interface Actor {
  /**
   * `api_key` (a Server API secret key), `user` (a signed-in end-user), `operator` (an operator signed in to the
   * dashboard, on the admin API or the Server API), `directory` (a SCIM directory's token) or `system` (the admin
   * token, the CLI, the first start).
   */
  type: 'api_key' | 'user' | 'operator' | 'directory' | 'system';
  /** The secret key's id, the user's id, the operator's id, the directory's id, or null for the system. */
  id: string | null;
  /** The operator behind an impersonated session, when there is one. */
  impersonatorId: string | null;
}

export interface CallerContext { ipAddress: string | null; userAgent: string | null }
/** The context of an HTTP request, whose client IP is always known. */
export interface RequestContext extends CallerContext { ipAddress: string }

/** The way a change came in; recorded as the producer of the event it writes. */
export type Channel = 'server_api' | 'client_api' | 'admin_api' | 'scim' | 'cli' | 'bootstrap' | 'job' | 'enrollment';

/** Everything a service needs to attribute a change: passed from the route (or the CLI) to the service. */
export interface Caller { actor: Actor; context: CallerContext; via: Channel }

const NO_CONTEXT: CallerContext = { ipAddress: null, userAgent: null };

/** A user acting for themselves on the client plane (signing up, signing in, verifying an email). */
export const userCaller = (userId: string, context: CallerContext): Caller =>
  ({ actor: { type: 'user', id: userId, impersonatorId: null }, context, via: 'client_api' });

/** The operator acting outside HTTP (the CLI, the first-start bootstrap). */
export const systemCaller = (via: Channel, context: CallerContext = NO_CONTEXT): Caller =>
  ({ actor: { type: 'system', id: null, impersonatorId: null }, context, via });

/** An operator signed in to the dashboard, acting on the admin API or the Server API: the trail names them by id. */
export const operatorCaller = (operatorId: string, via: Channel, context: CallerContext): Caller =>
  ({ actor: { type: 'operator', id: operatorId, impersonatorId: null }, context, via });

/** A SCIM directory provisioning through its token (an identity provider such as Okta or Entra ID). */
export const directoryCaller = (directoryId: string, context: CallerContext): Caller =>
  ({ actor: { type: 'directory', id: directoryId, impersonatorId: null }, context, via: 'scim' });
