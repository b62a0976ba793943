import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { InvitationSignUpBody } from '../../invitations/schemas.js';
import { OrganizationInvitationSignUpBody } from '../../organization-invitations/schemas.js';
import { requestContext } from '../../platform/http/planes.js';
import { NativeQuery, SessionResponse } from '../schemas.js';
import type { InvitationSignUps } from '../service/invitation-sign-ups.js';
import { answerSignIn } from './answer.js';

const tags = ['Client: authentication'];

/** Client plane, no session needed: sign-up from an environment or organization invitation link. */
export function invitationSignUpRoutes(signUps: InvitationSignUps): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/auth/invitation/password-signup', {
      schema: { operationId: 'signUpWithInvitation',
        summary: 'Sign up with an invitation token',
        description: 'Creates a verified user from the invitation (its public metadata copied), accepts the invitation and starts a session, in one transaction. A token works once.',
        tags, querystring: NativeQuery, body: InvitationSignUpBody, response: { 201: SessionResponse },
      },
    }, async (req, reply) =>
      answerSignIn(reply, await signUps.withInvitation(req.clientEnvironment, req.body, requestContext(req)), { native: req.query._is_native }, 201));
    app.post('/auth/organization-invitation/password-signup', {
      schema: { operationId: 'signUpWithOrganizationInvitation',
        summary: 'Sign up with an organization invitation token',
        description: 'Creates a verified user with the invited email, who joins the organization with the invited role, and starts a session, in one transaction. A token works once.',
        tags, querystring: NativeQuery, body: OrganizationInvitationSignUpBody, response: { 201: SessionResponse },
      },
    }, async (req, reply) =>
      answerSignIn(reply, await signUps.withOrganizationInvitation(req.clientEnvironment, req.body, requestContext(req)), { native: req.query._is_native }, 201));
  };
}
