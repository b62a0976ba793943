import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { clientCaller, NOT_UNDER_IMPERSONATION, OPEN_DURING_ENROLMENT, RECENTLY_AUTHENTICATED, signedIn } from '../platform/http/planes.js';
import { UserParams } from '../users/schemas.js';
import { CreationOptions, Passkey, PasskeyList, PasskeyParams, RegisterPasskeyBody, RenamePasskeyBody } from './schemas.js';
import type { PasskeysService } from './service.js';

const tags = ['Client: passkeys'];
const RECENT = ' Needs a recent authentication (403 reauthentication_required); not from an impersonated session (403 impersonation_restricted).';
const OPTIONS = 'Options for navigator.credentials.create() on a page of the frontend host (the RP ID is its host name): a discoverable '
  + 'credential with user verification, attestation none, the user\'s own passkeys excluded, and a challenge good once for 5 minutes. '
  + `403 passkeys_disabled when the setting passkeys.enabled is false. Open to a session held to enrolment.${RECENT}`;
const REGISTER = 'The response of navigator.credentials.create() (PublicKeyCredential.toJSON()), checked against a live challenge of this '
  + 'user: origin (the frontend host over https, or over http when it is a loopback host such as localhost), RP ID, user presence and verification, and the signature. 400 invalid_passkey_challenge '
  + 'for an unknown, expired, used or another environment\'s challenge (each is spent by its first use), 400 invalid_passkey when a check fails, '
  + '409 passkey_already_registered. Under mfa.policy "required" the passkey counts as enrolment: the user\'s sessions are no longer held to it.'
  + RECENT;

// Register is open during enrolment (a passkey satisfies mfa.policy "required"), and needs the user recently proven.
const ENROL = { ...NOT_UNDER_IMPERSONATION, ...RECENTLY_AUTHENTICATED, ...OPEN_DURING_ENROLMENT };
const SECURE = { ...NOT_UNDER_IMPERSONATION, ...RECENTLY_AUTHENTICATED };

/** Client plane, signed in: the user's own passkeys. */
export function passkeysClientRoutes(passkeys: PasskeysService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/me/passkeys/options', { config: ENROL, schema: { operationId: 'passkeyRegistrationOptions', summary: 'Start registering a passkey', description: OPTIONS, tags, response: { 200: CreationOptions } } },
      (req) => passkeys.registrationOptions(req.clientEnvironment, signedIn(req).userId));
    app.post('/me/passkeys', { config: ENROL, schema: { operationId: 'registerPasskey', summary: 'Register a passkey', description: REGISTER, tags, body: RegisterPasskeyBody, response: { 201: Passkey } } },
      async (req, reply) => reply.code(201).send(await passkeys.register(req.clientEnvironment, signedIn(req).userId, req.body, clientCaller(req))));
    app.get('/me/passkeys', { config: OPEN_DURING_ENROLMENT, schema: { operationId: 'listMyPasskeys', summary: "The signed-in user's passkeys", tags, response: { 200: PasskeyList } } },
      (req) => passkeys.list(req.environmentId, signedIn(req).userId));
    app.patch('/me/passkeys/:passkeyId', { config: NOT_UNDER_IMPERSONATION, schema: { operationId: 'renameMyPasskey', summary: 'Rename a passkey', description: 'Not from an impersonated session.', tags, params: PasskeyParams, body: RenamePasskeyBody, response: { 200: Passkey } } },
      (req) => passkeys.rename(req.environmentId, signedIn(req).userId, req.params.passkeyId, req.body.name));
    app.delete('/me/passkeys/:passkeyId', { config: SECURE, schema: { operationId: 'removeMyPasskey', summary: 'Remove a passkey', description: `Under mfa.policy "required" the last passkey of a user without an authenticator app stays (409 mfa_required_by_policy). The authenticator keeps its copy: remove it there too.${RECENT}`, tags, params: PasskeyParams, response: { 204: NoContent } } },
      async (req, reply) => { await passkeys.remove(req.clientEnvironment, signedIn(req).userId, req.params.passkeyId, clientCaller(req)); return noContent(reply); });
  };
}

/** Server API: a user's passkeys. */
export function passkeysServerRoutes(passkeys: PasskeysService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/users/:userId/passkeys', { schema: { operationId: 'getUserPasskeys', summary: "A user's passkeys", tags: ['Users'], params: UserParams, response: { 200: PasskeyList } } },
      (req) => passkeys.listOf(req.environmentId, req.params.userId));
  };
}
