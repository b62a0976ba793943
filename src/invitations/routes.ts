import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Page, PageQuery } from '../platform/http/common-schemas.js';
import { acceptedLocale, serverCaller } from '../platform/http/planes.js';
import {
  CreateInvitationBody, Invitation, InvitationParams, InvitationSummary, ListInvitationsQuery, MetadataPatchBody, SearchInvitationsBody,
} from './schemas.js';
import type { InvitationsService } from './service.js';

const tags = ['Invitations'];
export const SEARCH_BODY_LIMIT_BYTES = 24 * 1024;

/** Server API: environment invitations. */
export function invitationsServerRoutes(invitations: InvitationsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/invitations', {
      schema: { operationId: 'createInvitation',
        summary: 'Invite an email to sign up',
        description: 'Mails a link to signUpUrl carrying invitation_token (while signUpUrl is null and hostedPages is on, to the hosted page {frontend_url}/accept-invitation). The mail is in the language of the request\'s Accept-Language (`en` or `da`, else `en`). A pending invitation for the same email is replaced (it becomes REVOKED). '
          + "Counts against the environment's invitationRateLimitPerHour (fixed clock hours).",
        tags, body: CreateInvitationBody, response: { 201: InvitationSummary },
      },
    }, async (req, reply) => reply.code(201).send(await invitations.create(req.environmentId, req.body, serverCaller(req), acceptedLocale(req))));
    app.get('/invitations', { schema: { operationId: 'listInvitations', summary: 'List invitations (filter by status and email substring)', tags, querystring: ListInvitationsQuery, response: { 200: Page(InvitationSummary) } } },
      (req) => invitations.list(req.environmentId, { statuses: req.query.status, emailSearch: req.query.search }, req.query));
    app.post('/invitations/search', {
      bodyLimit: SEARCH_BODY_LIMIT_BYTES,
      schema: { operationId: 'searchInvitations', summary: 'Search invitations (statuses, email substring, metadata containment)', description: 'Bodies over 24 KiB are refused with 413.', tags, querystring: PageQuery, body: SearchInvitationsBody, response: { 200: Page(InvitationSummary) } },
    }, (req) => invitations.list(req.environmentId, req.body, req.query));
    app.get('/invitations/:invitationId', { schema: { operationId: 'getInvitation', summary: 'Get an invitation with its metadata', tags, params: InvitationParams, response: { 200: Invitation } } },
      (req) => invitations.get(req.environmentId, req.params.invitationId));
    app.post('/invitations/:invitationId/revoke', {
      schema: { operationId: 'revokeInvitation', summary: 'Revoke a pending invitation', description: 'PENDING → REVOKED; any other state answers 409 invitation_not_pending.', tags, params: InvitationParams, response: { 200: InvitationSummary } },
    }, (req) => invitations.revoke(req.environmentId, req.params.invitationId, serverCaller(req)));
    app.post('/invitations/:invitationId/resend', {
      schema: { operationId: 'resendInvitation',
        summary: 'Mail a pending invitation again',
        description: "Same invitation and expiry, new token: the earlier link stops working; the mail is in the request's Accept-Language. Counts against the hourly invitation limit.",
        tags, params: InvitationParams, response: { 200: InvitationSummary },
      },
    }, (req) => invitations.resend(req.environmentId, req.params.invitationId, serverCaller(req), acceptedLocale(req)));
    app.patch('/invitations/:invitationId/metadata', {
      schema: { operationId: 'mergeInvitationMetadata', summary: "Deep-merge an invitation's metadata", tags, params: InvitationParams, body: MetadataPatchBody, response: { 200: Invitation } },
    }, (req) => invitations.mergeMetadata(req.environmentId, req.params.invitationId, req.body));
  };
}
