import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { clientCaller, NOT_UNDER_IMPERSONATION, RECENTLY_AUTHENTICATED, signedIn } from '../platform/http/planes.js';
import { clearSessionCookie } from '../sessions/cookies.js';
import { ChangePasswordBody, ReauthenticateBody } from './schemas.js';
import type { AccountCaller, AccountService } from './service.js';

const tags = ['Client: current user'];

const CHANGE_PASSWORD = 'The new password is checked against the policy first (400 weak_password). An account with a password must send it as '
  + '`currentPassword` (400 current_password_required, 400 invalid_password); an account without one (external sign-in only) needs a recent '
  + 'sign-in instead (403 reauthentication_required). Wrong passwords count against the account (the lockout\'s maxFailedAttempts per coolDownSeconds, then 429). '
  + 'With `signOutOtherSessions` every other session ends; this one stays and counts as recently authenticated. A notice is mailed. '
  + 'An impersonated session gets 403 impersonation_restricted.';
const REAUTHENTICATE = 'Confirms the password, or a code of the second factor (TOTP or backup code; 400 invalid_code): the session counts as recently authenticated for 10 minutes, which sensitive changes ask for '
  + '(403 reauthentication_required). 400 invalid_password; 409 password_not_set for an account without a password (sign in again through '
  + 'its provider instead); wrong passwords count as for a password change (429). An impersonated session gets 403 impersonation_restricted.';
const DELETE_ME = 'Soft-deletes the account as the Server API does: every session revoked, the email freed, the id kept with status deleted. '
  + 'Needs a recent sign-in (403 reauthentication_required) and the selfDeletionEnabled setting (403 self_deletion_disabled); the only active owner '
  + 'of an organization gets 409 last_owner (properties.organizationIds). An impersonated session gets 403 impersonation_restricted. The cookie is cleared.';

const caller = (req: FastifyRequest): AccountCaller => ({ env: req.clientEnvironment, session: signedIn(req), caller: clientCaller(req) });

/** Client plane, signed in: the user's own password, a fresh password check, and deleting the account. */
export function accountClientRoutes(account: AccountService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/me/password', { config: NOT_UNDER_IMPERSONATION, schema: { operationId: 'changeMyPassword', summary: 'Change or set the password', description: CHANGE_PASSWORD, tags, body: ChangePasswordBody, response: { 204: NoContent } } },
      async (req, reply) => { await account.changePassword(caller(req), req.body); return noContent(reply); });
    app.post('/me/reauthenticate', { config: NOT_UNDER_IMPERSONATION, schema: { operationId: 'reauthenticate', summary: 'Confirm the password for a sensitive change', description: REAUTHENTICATE, tags, body: ReauthenticateBody, response: { 204: NoContent } } },
      async (req, reply) => { await account.reauthenticate(caller(req), req.body); return noContent(reply); });
    app.delete('/me', { config: { ...NOT_UNDER_IMPERSONATION, ...RECENTLY_AUTHENTICATED }, schema: { operationId: 'deleteMe', summary: 'Delete the signed-in user\'s account', description: DELETE_ME, tags, response: { 204: NoContent } } },
      async (req, reply) => {
        await account.deleteOwnAccount(caller(req));
        clearSessionCookie(reply);
        return noContent(reply);
      });
  };
}
