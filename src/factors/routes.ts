import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { clientCaller, NOT_UNDER_IMPERSONATION, OPEN_DURING_ENROLMENT, RECENTLY_AUTHENTICATED, serverCaller, signedIn } from '../platform/http/planes.js';
import { UserParams } from '../users/schemas.js';
import { BackupCodes, ConfirmTotpBody, FactorParams, MfaOverview, TotpEnrolment } from './schemas.js';
import type { FactorsService } from './service.js';

const tags = ['Client: second factors'];
const ENROL = 'A new authenticator-app (TOTP) factor, pending until a first code confirms it: the secret as text, an otpauth:// URI and a QR code '
  + '(SVG) of it, shown this once (the secret is sealed at rest). A new enrolment replaces a pending one. 409 totp_already_enrolled with a confirmed one; '
  + '403 mfa_disabled when the setting mfa.policy is off. Open to a session held to enrolment; not to an impersonated one.';
const CONFIRM = 'The first code confirms the factor and answers 10 single-use backup codes, shown once. The session counts as a second-factor '
  + 'check (recent, amr with otp and mfa) and every session of the user is freed from enrolment. A wrong or replayed code: 400 invalid_code.';
const RECENT = ' Needs a recent authentication (403 reauthentication_required); not from an impersonated session.';

const SECURE = { ...NOT_UNDER_IMPERSONATION, ...RECENTLY_AUTHENTICATED };
const ENROLMENT = { ...NOT_UNDER_IMPERSONATION, ...OPEN_DURING_ENROLMENT };

/** Client plane, signed in: the user's own second factors. */
export function factorsClientRoutes(factors: FactorsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/me/mfa', { config: OPEN_DURING_ENROLMENT, schema: { operationId: 'getMyFactors', summary: "The signed-in user's second factors", tags, response: { 200: MfaOverview } } },
      (req) => factors.overview(req.environmentId, signedIn(req).userId));
    app.post('/me/mfa/totp', { config: ENROLMENT, schema: { operationId: 'enrolTotp', summary: 'Start enrolling an authenticator app', description: ENROL, tags, response: { 201: TotpEnrolment } } },
      async (req, reply) => reply.code(201).send(await factors.enrolTotp(req.clientEnvironment, signedIn(req).userId)));
    app.post('/me/mfa/totp/:factorId/confirm', { config: ENROLMENT, schema: { operationId: 'confirmTotp', summary: 'Confirm an authenticator app with its first code', description: CONFIRM, tags, params: FactorParams, body: ConfirmTotpBody, response: { 200: BackupCodes } } },
      (req) => factors.confirmTotp(req.clientEnvironment, signedIn(req).userId, signedIn(req).id, req.params.factorId, req.body.code, clientCaller(req)));
    app.post('/me/mfa/backup-codes', { config: SECURE, schema: { operationId: 'regenerateBackupCodes', summary: 'Replace the backup codes', description: `Ten new single-use codes; the old ones stop working. 409 no_second_factor without a factor.${RECENT}`, tags, response: { 200: BackupCodes } } },
      (req) => factors.regenerateBackupCodes(req.clientEnvironment, signedIn(req).userId, clientCaller(req)));
    app.delete('/me/mfa/:factorId', { config: SECURE, schema: { operationId: 'removeMyFactor', summary: 'Remove a second factor', description: `The backup codes go with the last factor; under mfa.policy "required" the last one stays (409 mfa_required_by_policy).${RECENT}`, tags, params: FactorParams, response: { 204: NoContent } } },
      async (req, reply) => { await factors.remove(req.clientEnvironment, signedIn(req).userId, req.params.factorId, clientCaller(req)); return noContent(reply); });
  };
}

/** Server API: a user's second factors, and the support reset. */
export function factorsServerRoutes(factors: FactorsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const serverTags = ['Users'];
    app.get('/users/:userId/mfa', { schema: { operationId: 'getUserFactors', summary: "A user's second factors", tags: serverTags, params: UserParams, response: { 200: MfaOverview } } },
      (req) => factors.overviewOf(req.environmentId, req.params.userId));
    app.delete('/users/:userId/mfa', { schema: { operationId: 'resetUserFactors', summary: "Remove all of a user's second factors (lost device)", description: 'Every factor and backup code is removed and every session of the user revoked, in one transaction (user.mfa_reset). The user signs in with the password alone next time (or enrols again where mfa.policy is required).', tags: serverTags, params: UserParams, response: { 204: NoContent } } },
      async (req, reply) => { await factors.reset(req.environmentId, req.params.userId, serverCaller(req)); return noContent(reply); });
  };
}
