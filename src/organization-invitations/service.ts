import { uuidv7 } from 'uuidv7';
import { recordOwnEvent } from '../audit/service.js';
import type { EnvironmentContext, EnvironmentsService } from '../environments/service.js';
import { legalConsentRequired } from '../invitations/errors.js';
import { alreadyMember, userNotActive } from '../organizations/errors.js';
import { authorize } from '../organizations/policy.js';
import { joinOrganization, lockOrganization, type OrganizationsService } from '../organizations/service.js';
import { userCaller, type Caller, type RequestContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { Mailer } from '../platform/mail/mailer.js';
import type { RateLimiter } from '../platform/rate-limit.js';
import { startSession } from '../sessions/service.js';
import { checkedPasswordHash, insertVerifiedUser, normalizeEmail, toClientUser } from '../users/accounts.js';
import { nameRequired } from '../users/errors.js';
import type { UsersService } from '../users/service.js';
import { acceptLink, organizationInvitationMail } from './email.js';
import { emailMismatch, invitationNotFound, invitationNotPending, organizationInvitationRateLimited, tokenUnusable } from './errors.js';
import type { CreatedOrganizationInvitation, CreateOrganizationInvitationBody, OrganizationInvitationSignUpBody } from './schemas.js';
import { createOrganizationInvitationsStore } from './store.js';
import type { OrganizationPageQuery } from '../organizations/schemas.js';

export interface OrganizationInvitationsDeps {
  db: Db; clock: Clock; mailer: Mailer; limiter: RateLimiter;
  environments: Pick<EnvironmentsService, 'record'>;
  organizations: Pick<OrganizationsService, 'memberOf' | 'authorizeIn' | 'roleOf'>;
  users: Pick<UsersService, 'get'>;
}

const EXPIRES_IN_MS = 30 * 86_400_000;

/** Organization invitations: members whose role has invitations:manage invite by email with a role; the invitee accepts or signs up with the token. */
export function createOrganizationInvitationsService({ db, clock, mailer, limiter, environments, organizations, users }: OrganizationInvitationsDeps) {
  const store = createOrganizationInvitationsStore(db);

  const record = (trx: Db, environmentId: string, action: string, organizationId: string, invitationId: string, by: Caller, metadata = {}) =>
    recordOwnEvent(trx, environmentId, {
      action, ...by, metadata, targets: [{ type: 'organization', id: organizationId }, { type: 'organization_invitation', id: invitationId }],
    }, clock.now());

  /**
   * Counts an invitation against the environment's hourly limit inside the inviting transaction, after
   * the checks: a refused or failed invitation rolls its hit back, so only stored invitations count.
   */
  async function countInvitation(trx: Db, environmentId: string, max: number) {
    const hit = limiter.prepareHit(environmentId, 'organization_invitations', { max, windowSeconds: 3600 });
    const result = hit.result((await hit.statement.execute(trx)).rows[0]?.count);
    if (!result.allowed) throw organizationInvitationRateLimited(result.retryAfterSeconds);
  }

  /** Why a token cannot be redeemed now, read in the transaction after the redeeming statement matched nothing. */
  const unusable = async (trx: Db, environmentId: string, tokenHash: Buffer) =>
    tokenUnusable((await createOrganizationInvitationsStore(trx).findByToken(environmentId, tokenHash, clock.now()))?.status);

  return {
    /**
     * Invites an email with a role (invitations:manage; only to a role carrying no permission the
     * inviter's lacks, so only an owner invites an owner). The token is shown once; with the environment's
     * invitationAcceptUrl a mail carries it, otherwise nothing is sent. A pending invitation of the same
     * email to the organization is replaced.
     */
    async create(environmentId: string, organizationId: string, inviterId: string, body: CreateOrganizationInvitationBody, by: Caller): Promise<CreatedOrganizationInvitation> {
      const { settings } = await environments.record(environmentId);
      const email = normalizeEmail(body.email);
      const token = randomToken('orginv_');
      const acceptUrl = settings.invitationAcceptUrl;
      const invitation = await inTransaction(db, async (trx) => {
        // The inviter's role is read under the organization lock that role changes take: a demotion either
        // lands before this check or waits until the invitation is stored. A deleted organization is 404 here.
        const organization = await lockOrganization(trx, environmentId, organizationId);
        await organizations.authorizeIn(trx, environmentId, organization, inviterId, 'invitations.invite', { grants: body.role });
        await countInvitation(trx, environmentId, settings.invitationRateLimitPerHour);
        const txStore = createOrganizationInvitationsStore(trx);
        const now = clock.now();
        await txStore.lockEmail(environmentId, organizationId, email);
        await txStore.expirePendingFor(environmentId, organizationId, email, now);
        const replaced = await txStore.revokePendingFor(environmentId, organizationId, email, now);
        const created = await txStore.insert(environmentId, {
          organizationId, email, role: body.role, tokenHash: sha256(token), inviterUserId: inviterId, expiresAt: new Date(now.getTime() + EXPIRES_IN_MS),
        }, now);
        // Queued with the token it carries: the mail goes out if and only if the invitation is stored.
        if (acceptUrl) await mailer.send(environmentId, organizationInvitationMail(email, organization.name, body.role, acceptLink(acceptUrl, token), new Date(created.expiresAt)), trx);
        for (const id of replaced) await record(trx, environmentId, 'organization_invitation.revoked', organizationId, id, by, { reason: 'replaced', replacedBy: created.id });
        await record(trx, environmentId, 'organization_invitation.created', organizationId, created.id, by, { role: body.role });
        return created;
      });
      const { id, expiresAt } = invitation;
      return { id, organizationId, email, role: body.role, token, expiresAt, emailDelivery: acceptUrl ? 'dispatched' : 'not_configured' };
    },

    /**
     * The pending invitations, for invitations:manage. A read, so it is authorized without the lock: a
     * demotion that lands just after the check only finds the list already shown.
     */
    async listPending(environmentId: string, organizationId: string, userId: string, page: OrganizationPageQuery) {
      authorize(await organizations.memberOf(environmentId, organizationId, userId), 'invitations.manage');
      return store.listPending(environmentId, organizationId, page, clock.now());
    },

    /** PENDING → REVOKED (invitations:manage, checked under the organization lock); any other state is 409 with the current status. */
    async revoke(environmentId: string, organizationId: string, userId: string, invitationId: string, by: Caller) {
      const revoked = await inTransaction(db, async (trx) => {
        await organizations.authorizeIn(trx, environmentId, await lockOrganization(trx, environmentId, organizationId), userId, 'invitations.manage');
        const done = await createOrganizationInvitationsStore(trx).revoke(environmentId, organizationId, invitationId, clock.now());
        if (done) await record(trx, environmentId, 'organization_invitation.revoked', organizationId, invitationId, by);
        return done;
      });
      if (revoked) return revoked;
      const current = await store.find(environmentId, organizationId, invitationId, clock.now());
      throw current ? invitationNotPending(current.status) : invitationNotFound();
    },

    /**
     * The signed-in user joins with the invited role, if the invitation is for their verified email. One
     * transaction: the single statement that redeems the token (so it works once), then the membership.
     */
    async accept(environmentId: string, userId: string, token: string, context: RequestContext) {
      const tokenHash = sha256(token);
      const found = await store.findByToken(environmentId, tokenHash, clock.now());
      if (found?.status !== 'PENDING') throw tokenUnusable(found?.status);
      const user = await users.get(environmentId, userId);
      if (!user.emailVerifiedAt || user.email !== found.email) throw emailMismatch();
      const role = await organizations.roleOf(environmentId, found.organizationId, found.role);
      return inTransaction(db, async (trx) => {
        const now = clock.now();
        await lockOrganization(trx, environmentId, found.organizationId);
        const accepted = await createOrganizationInvitationsStore(trx).accept(environmentId, tokenHash, userId, now);
        if (!accepted) throw await unusable(trx, environmentId, tokenHash);
        const by = userCaller(userId, context);
        const member = await joinOrganization(trx, environmentId, accepted.organizationId, userId, role, by, now);
        if (member === 'already_member') throw alreadyMember();
        if (!member) throw userNotActive();
        await record(trx, environmentId, 'organization_invitation.accepted', accepted.organizationId, accepted.id, by, { userId });
        return { organizationId: member.organizationId, userId, role: member.role, roleName: member.roleName, joinedAt: member.joinedAt };
      });
    },

    /**
     * Sign-up from an organization invitation: in one transaction the token is redeemed, a verified user
     * with the invited email is created, joins with the invited role, and a session starts.
     */
    async signUp(env: EnvironmentContext, body: OrganizationInvitationSignUpBody, context: RequestContext) {
      if (!body.legalConsentAccepted) throw legalConsentRequired();
      if (env.settings.requiredFields.includes('name') && !body.name) throw nameRequired();
      const tokenHash = sha256(body.token);
      const found = await store.findByToken(env.id, tokenHash, clock.now());
      if (found?.status !== 'PENDING') throw tokenUnusable(found?.status);
      const passwordHash = await checkedPasswordHash(body.password, env.settings, found.email);
      const role = await organizations.roleOf(env.id, found.organizationId, found.role);
      return inTransaction(db, async (trx) => {
        const now = clock.now();
        const userId = uuidv7();
        await lockOrganization(trx, env.id, found.organizationId);
        const accepted = await createOrganizationInvitationsStore(trx).accept(env.id, tokenHash, userId, now);
        if (!accepted) throw await unusable(trx, env.id, tokenHash);
        const user = await insertVerifiedUser(trx, env.id, { id: userId, email: accepted.email, passwordHash, name: body.name ?? null, publicMetadata: {} }, now);
        const by = userCaller(userId, context);
        await joinOrganization(trx, env.id, accepted.organizationId, userId, role, by, now);
        const started = await startSession(trx, env.id, userId, env.settings.session, context, now);
        if (!started) throw new Error('a user created in this transaction must be active');
        await record(trx, env.id, 'organization_invitation.accepted', accepted.organizationId, accepted.id, by, { userId });
        return { user: toClientUser(user), ...started };
      });
    },
  };
}
export type OrganizationInvitationsService = ReturnType<typeof createOrganizationInvitationsService>;
