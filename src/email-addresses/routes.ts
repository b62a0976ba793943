import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { NoContent, noContent } from '../platform/http/common-schemas.js';
import { clientCaller, NOT_UNDER_IMPERSONATION, RECENTLY_AUTHENTICATED, signedIn } from '../platform/http/planes.js';
import { UserParams } from '../users/schemas.js';
import { AddEmailAddressBody, EmailAddress, EmailAddressList, EmailAddressParams, VerifyEmailAddressBody } from './schemas.js';
import type { EmailAddressesService } from './service.js';

const IMPERSONATION = ' An impersonated session gets 403 impersonation_restricted.';
const ADD = 'Adds an unverified address and mails it a 6-digit code (10 minutes, 5 tries). 409 email_taken when another account has verified '
  + 'the address or when it is already one of yours (an unverified claim elsewhere does not count); 409 email_address_limit past 10 addresses; '
  + '429 rate_limited past 10 codes an hour per user or 30 per client network.' + IMPERSONATION;
const VERIFY = 'Verifies the address with the mailed code: 400 invalid_code when it is wrong, expired or used up; 409 email_taken when another '
  + 'account verified the address first. A verified address signs in like the primary. Verifying a verified address answers it unchanged.' + IMPERSONATION;
const MAKE_PRIMARY = "Makes a verified address primary (409 email_not_verified otherwise): it becomes the user's `email`. Needs a recent sign-in "
  + '(403 reauthentication_required).' + IMPERSONATION;
const REMOVE = 'Removes an address; never the primary (409 primary_email).' + IMPERSONATION;

/** Client plane, signed in: the user's own email addresses. */
export function emailAddressesClientRoutes(addresses: EmailAddressesService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const tags = ['Client: current user'];
    app.get('/me/email-addresses', { schema: { operationId: 'listMyEmailAddresses', summary: "List the signed-in user's email addresses", tags, response: { 200: EmailAddressList } } },
      (req) => addresses.list(req.environmentId, signedIn(req).userId));
    app.post('/me/email-addresses', { config: NOT_UNDER_IMPERSONATION, schema: { operationId: 'addMyEmailAddress', summary: 'Add an email address', description: ADD, tags, body: AddEmailAddressBody, response: { 201: EmailAddress } } },
      async (req, reply) => reply.code(201).send(await addresses.add(req.environmentId, signedIn(req).userId, req.body.email, clientCaller(req))));
    app.post('/me/email-addresses/:id/verify', { config: NOT_UNDER_IMPERSONATION, schema: { operationId: 'verifyMyEmailAddress', summary: 'Verify an email address with its code', description: VERIFY, tags, params: EmailAddressParams, body: VerifyEmailAddressBody, response: { 200: EmailAddress } } },
      (req) => addresses.verify(req.environmentId, signedIn(req).userId, req.params.id, req.body.code, clientCaller(req)));
    app.post('/me/email-addresses/:id/make-primary', { config: { ...NOT_UNDER_IMPERSONATION, ...RECENTLY_AUTHENTICATED }, schema: { operationId: 'makeMyEmailAddressPrimary', summary: 'Make a verified email address primary', description: MAKE_PRIMARY, tags, params: EmailAddressParams, response: { 200: EmailAddress } } },
      (req) => addresses.makePrimary(req.environmentId, signedIn(req).userId, req.params.id, clientCaller(req)));
    app.delete('/me/email-addresses/:id', { config: NOT_UNDER_IMPERSONATION, schema: { operationId: 'removeMyEmailAddress', summary: 'Remove an email address', description: REMOVE, tags, params: EmailAddressParams, response: { 204: NoContent } } },
      async (req, reply) => { await addresses.remove(req.environmentId, signedIn(req).userId, req.params.id, clientCaller(req)); return noContent(reply); });
  };
}

/** Server API: a user's email addresses, read-only (PATCH /users/{userId} sets the primary's email). */
export function emailAddressesServerRoutes(addresses: EmailAddressesService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.get('/users/:userId/email-addresses', { schema: { operationId: 'listUserEmailAddresses', summary: "List a user's email addresses", description: 'The primary first; 404 user_not_found for a user of another environment.', tags: ['Users'], params: UserParams, response: { 200: EmailAddressList } } },
      (req) => addresses.list(req.environmentId, req.params.userId));
  };
}
