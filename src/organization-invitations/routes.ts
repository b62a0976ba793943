import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { OrganizationPageQuery, OrganizationParams } from '../organizations/schemas.js';
import { Page } from '../platform/http/common-schemas.js';
import { acceptedLocale, clientCaller, requestContext, serverCaller, signedIn } from '../platform/http/planes.js';
import {
  AcceptBody, CreatedOrganizationInvitation, CreateOrganizationInvitationBody, JoinedMembership, OrganizationInvitation,
  OrganizationInvitationParams,
} from './schemas.js';
import type { OrganizationInvitationsService } from './service.js';

const tags = ['Client: organizations'];
const CREATE = 'Owner or admin (an admin cannot invite an owner). The token is shown only here and stored hashed. With the '
  + "environment's invitationAcceptUrl (else, hosted pages on, {frontend_url}/accept-organization-invitation) a mail links to it with "
  + '`invitation_token` (emailDelivery `dispatched`); without either no mail is sent (`not_configured`) and the token is the only way in. A pending invitation of the same email is replaced. Counts '
  + "against the environment's invitationRateLimitPerHour (429). Expires in 30 days.";
const ACCEPT = "The signed-in user joins with the invited role; the invitation must be for the user's verified email (else 403 forbidden). "
  + 'A token works once: 409 invitation_already_accepted, 410 invitation_revoked or invitation_expired, 404 invitation_not_found; '
  + '409 already_member leaves the invitation pending.';

/** Client plane, signed in: invite to an organization, list and revoke its invitations, accept one. */
export function organizationInvitationsClientRoutes(invitations: OrganizationInvitationsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/organizations/:organizationId/invitations', {
      schema: { operationId: 'inviteToMyOrganization', summary: 'Invite an email to the organization with a role', description: CREATE, tags, params: OrganizationParams, body: CreateOrganizationInvitationBody, response: { 201: CreatedOrganizationInvitation } },
    }, async (req, reply) => reply.code(201).send(await invitations.create(req.environmentId, req.params.organizationId, signedIn(req).userId, req.body, clientCaller(req), acceptedLocale(req))));
    app.get('/organizations/:organizationId/invitations', {
      schema: { operationId: 'listMyOrganizationInvitations', summary: "List the organization's pending invitations (owner or admin)", tags, params: OrganizationParams, querystring: OrganizationPageQuery, response: { 200: Page(OrganizationInvitation) } },
    }, (req) => invitations.listPending(req.environmentId, req.params.organizationId, signedIn(req).userId, req.query));
    app.post('/organizations/:organizationId/invitations/:invitationId/revoke', {
      schema: { operationId: 'revokeMyOrganizationInvitation', summary: 'Revoke a pending invitation (owner or admin)', tags, params: OrganizationInvitationParams, response: { 200: OrganizationInvitation } },
    }, (req) => invitations.revoke(req.environmentId, req.params.organizationId, signedIn(req).userId, req.params.invitationId, clientCaller(req)));
    app.post('/organization-invitations/accept', {
      schema: { operationId: 'acceptOrganizationInvitation', summary: 'Accept an organization invitation', description: ACCEPT, tags, body: AcceptBody, response: { 200: JoinedMembership } },
    }, (req) => invitations.accept(req.environmentId, signedIn(req).userId, req.body.token, requestContext(req)));
  };
}

const SERVER_CREATE = 'Any role of the organization\'s role set, owner included (400 invalid_role otherwise); no inviting member, so the '
  + 'invitation stays valid whoever leaves. Mail, token, replacement, rate limit and expiry as on the client plane: the token is shown only '
  + "here; with the environment's invitationAcceptUrl (else, hosted pages on, {frontend_url}/accept-organization-invitation) a mail links to it "
  + '(emailDelivery `dispatched`), in the language of the invitee\'s account or else of the request\'s Accept-Language.';

/** Server API: an organization's invitations, sent by the backend or an operator rather than by a member. */
export function organizationInvitationsServerRoutes(invitations: OrganizationInvitationsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const serverTags = ['Organizations'];
    app.post('/organizations/:organizationId/invitations', {
      schema: { operationId: 'createOrganizationInvitation', summary: 'Invite an email to the organization with a role', description: SERVER_CREATE, tags: serverTags, params: OrganizationParams, body: CreateOrganizationInvitationBody, response: { 201: CreatedOrganizationInvitation } },
    }, async (req, reply) => reply.code(201).send(await invitations.create(req.environmentId, req.params.organizationId, null, req.body, serverCaller(req), acceptedLocale(req))));
    app.get('/organizations/:organizationId/invitations', {
      schema: { operationId: 'listOrganizationInvitations', summary: "List the organization's pending invitations (ascending id; limit clamped to 1..100)", tags: serverTags, params: OrganizationParams, querystring: OrganizationPageQuery, response: { 200: Page(OrganizationInvitation) } },
    }, (req) => invitations.listPending(req.environmentId, req.params.organizationId, null, req.query));
    app.post('/organizations/:organizationId/invitations/:invitationId/revoke', {
      schema: { operationId: 'revokeOrganizationInvitation', summary: 'Revoke a pending organization invitation', description: 'PENDING → REVOKED; any other state answers 409 invitation_not_pending naming it.', tags: serverTags, params: OrganizationInvitationParams, response: { 200: OrganizationInvitation } },
    }, (req) => invitations.revoke(req.environmentId, req.params.organizationId, null, req.params.invitationId, serverCaller(req)));
  };
}
