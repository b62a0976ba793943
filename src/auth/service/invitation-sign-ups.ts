import { uuidv7 } from 'uuidv7';
import type { Clock } from '../../platform/clock.js';
import { inTransaction, type Db } from '../../platform/db/database.js';
import { legalConsentRequired } from '../../invitations/errors.js';
import type { InvitationSignUpBody } from '../../invitations/schemas.js';
import { acceptInvitation, type InvitationsService } from '../../invitations/service.js';
import { enrollByVerifiedEmail } from '../../organization-domains/service.js';
import type { OrganizationInvitationSignUpBody } from '../../organization-invitations/schemas.js';
import { acceptOrganizationInvitation, type OrganizationInvitationsService } from '../../organization-invitations/service.js';
import { userCaller, type RequestContext } from '../../platform/caller.js';
import { checkedPasswordHash, insertVerifiedUser } from '../../users/accounts.js';
import { refuseWhereSsoIsEnforced } from '../../sso/service.js';
import { nameRequired } from '../../users/errors.js';
import { complete, type AuthEnvironment, type IssueSession, type SignInResult } from './issue-session.js';

export interface InvitationSignUpsDeps {
  db: Db; clock: Clock; issueSession: IssueSession;
  invitations: Pick<InvitationsService, 'pendingByToken'>;
  organizationInvitations: Pick<OrganizationInvitationsService, 'pendingByToken'>;
}

/** What both invitation sign-ups ask of the body before any token is read. */
function checkSignUpBody(env: AuthEnvironment, body: { legalConsentAccepted: boolean; name?: string | null }) {
  if (!body.legalConsentAccepted) throw legalConsentRequired();
  if (env.settings.requiredFields.includes('name') && !body.name) throw nameRequired();
}

/**
 * Sign-up from an invitation token, environment or organization: the invited email needs no code (the
 * link proved it). In one transaction the token is redeemed (so it works once), a verified user is
 * created, an organization invitation's membership made, and the session started; any failure leaves
 * the invitation pending. An invited email whose organization enforces its SSO connection signs up there,
 * never with a password (403 sso_required), and its invitation stays pending.
 */
export function createInvitationSignUps({ db, clock, issueSession, invitations, organizationInvitations }: InvitationSignUpsDeps) {
  return {
    async withInvitation(env: AuthEnvironment, body: InvitationSignUpBody, context: RequestContext): Promise<SignInResult> {
      checkSignUpBody(env, body);
      const pending = await invitations.pendingByToken(env.id, body.token);
      await refuseWhereSsoIsEnforced(db, env.id, pending.email);
      const passwordHash = await checkedPasswordHash(body.password, env.settings, pending.email);
      return complete(await inTransaction(db, async (trx) => {
        const now = clock.now();
        const userId = uuidv7();
        const accepted = await acceptInvitation(trx, env.id, pending.tokenHash, userId, context, now);
        const user = await insertVerifiedUser(trx, env.id, {
          id: userId, email: accepted.email, passwordHash, name: body.name ?? null, publicMetadata: accepted.publicMetadata,
        }, now);
        const signedIn = await issueSession(trx, env, user, context, 'invitation', { invitationId: accepted.id });
        await enrollByVerifiedEmail(trx, env.id, user, now); // after the sign-in, whose event makes the user.created webhook
        return signedIn;
      }));
    },

    async withOrganizationInvitation(env: AuthEnvironment, body: OrganizationInvitationSignUpBody, context: RequestContext): Promise<SignInResult> {
      checkSignUpBody(env, body);
      const pending = await organizationInvitations.pendingByToken(env.id, body.token);
      await refuseWhereSsoIsEnforced(db, env.id, pending.email);
      const passwordHash = await checkedPasswordHash(body.password, env.settings, pending.email);
      return complete(await inTransaction(db, async (trx) => {
        const now = clock.now();
        const userId = uuidv7();
        let user;
        await acceptOrganizationInvitation(trx, env.id, pending.organizationId, pending.tokenHash, userId, pending.role, userCaller(userId, context), now,
          async (email) => { user = await insertVerifiedUser(trx, env.id, { id: userId, email, passwordHash, name: body.name ?? null, publicMetadata: {} }, now); });
        const signedIn = await issueSession(trx, env, user!, context, 'organization_invitation', { organizationId: pending.organizationId });
        await enrollByVerifiedEmail(trx, env.id, user!, now);
        return signedIn;
      }));
    },
  };
}
export type InvitationSignUps = ReturnType<typeof createInvitationSignUps>;
