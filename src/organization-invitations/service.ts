import { recordOwnEvent } from '../audit/service.js';
import type { EnvironmentsService } from '../environments/service.js';
import { forbidden, organizationNotFound, alreadyMember, userNotActive } from '../organizations/errors.js';
import { ADMIN, OWNER, type Role } from '../organizations/roles.js';
import { joinOrganization, lockOrganization, type OrganizationsService } from '../organizations/service.js';
import { userCaller, type Caller, type RequestContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { Mailer } from '../platform/mail/mailer.js';
import type { RateLimiter } from '../platform/rate-limit.js';
import { normalizeEmail } from '../users/accounts.js';
import type { UsersService } from '../users/service.js';
import { acceptLink, organizationInvitationMail } from './email.js';
import { emailMismatch, invitationNotFound, invitationNotPending, organizationInvitationRateLimited, tokenUnusable } from './errors.js';
import type { CreatedOrganizationInvitation, CreateOrganizationInvitationBody } from './schemas.js';
import { createOrganizationInvitationsStore } from './store.js';
import type { OrganizationPageQuery } from '../organizations/schemas.js';

/**
 * Redeems the invitation for the user and makes them a member with the invited role, in the caller's
 * transaction, under the organization lock: the single statement that lets a token work once, then
 * `createUser` (a sign-up's new user), the membership and the record. The membership, 'already_member',
 * or undefined when the user is not active.
 */
export async function acceptOrganizationInvitation(
  trx: Db, environmentId: string, organizationId: string, tokenHash: Buffer, userId: string, role: Role, by: Caller, now: Date,
  createUser?: (email: string) => Promise<unknown>,
) {
  await lockOrganization(trx, environmentId, organizationId);
  const invitations = createOrganizationInvitationsStore(trx);
  const accepted = await invitations.accept(environmentId, tokenHash, userId, now);
  // A concurrent redeem got there first (or the state changed since the read): say which state it is in now.
  if (!accepted) throw tokenUnusable((await invitations.findByToken(environmentId, tokenHash, now))?.status);
  await createUser?.(accepted.email);
  const member = await joinOrganization(trx, environmentId, accepted.organizationId, userId, role, by, now);
  if (member && member !== 'already_member') await recordInvitationEvent(trx, environmentId, 'organization_invitation.accepted', accepted.organizationId, accepted.id, by, now, { userId });
  return member;
}

const recordInvitationEvent = (trx: Db, environmentId: string, action: string, organizationId: string, invitationId: string, by: Caller, now: Date, metadata = {}) =>
  recordOwnEvent(trx, environmentId, {
    action, ...by, metadata, targets: [{ type: 'organization', id: organizationId }, { type: 'organization_invitation', id: invitationId }],
  }, now);

export interface OrganizationInvitationsDeps {
  db: Db; clock: Clock; mailer: Mailer; limiter: RateLimiter;
  environments: Pick<EnvironmentsService, 'record'>;
  organizations: Pick<OrganizationsService, 'findMembership' | 'get' | 'roleOf'>;
  users: Pick<UsersService, 'get'>;
}

const EXPIRES_IN_MS = 30 * 86_400_000;

/** Organization invitations: owners and admins invite by email with a role; the invitee accepts or signs up with the token. */
export function createOrganizationInvitationsService({ db, clock, mailer, limiter, environments, organizations, users }: OrganizationInvitationsDeps) {
  const store = createOrganizationInvitationsStore(db);

  const record = (trx: Db, environmentId: string, action: string, organizationId: string, invitationId: string, by: Caller, metadata = {}) =>
    recordInvitationEvent(trx, environmentId, action, organizationId, invitationId, by, clock.now(), metadata);

  /** The caller's membership when it may manage invitations; 404 for a non-member, 403 for a plain member. */
  async function asManager(environmentId: string, organizationId: string, userId: string) {
    const membership = await organizations.findMembership(environmentId, organizationId, userId);
    if (!membership) throw organizationNotFound();
    if (membership.role !== OWNER && membership.role !== ADMIN) throw forbidden('Only owner or admin members can manage invitations.');
    return membership;
  }

  /** The pending invitation a token names, with the role it grants; 404, 409 or 410 naming its state otherwise. */
  async function pendingByToken(environmentId: string, token: string) {
    const tokenHash = sha256(token);
    const found = await store.findByToken(environmentId, tokenHash, clock.now());
    if (found?.status !== 'PENDING') throw tokenUnusable(found?.status);
    return { tokenHash, email: found.email, organizationId: found.organizationId, role: await organizations.roleOf(environmentId, found.organizationId, found.role) };
  }

  return {
    /**
     * Invites an email with a role (owner or admin; only an owner invites an owner). The token is shown
     * once; with the environment's invitationAcceptUrl a mail carries it, otherwise nothing is sent.
     * A pending invitation of the same email to the organization is replaced.
     */
    async create(environmentId: string, organizationId: string, inviterId: string, body: CreateOrganizationInvitationBody, by: Caller): Promise<CreatedOrganizationInvitation> {
      const inviter = await asManager(environmentId, organizationId, inviterId);
      await organizations.roleOf(environmentId, organizationId, body.role);
      if (body.role === OWNER && inviter.role !== OWNER) throw forbidden('Only an owner can invite an owner.');
      const { settings } = await environments.record(environmentId);
      // Read before the invitation is stored: a mail names the organization, and a deleted one answers 404 before any write.
      const { name: organizationName } = await organizations.get(environmentId, organizationId);
      const hit = await limiter.hit(environmentId, 'organization_invitations', { max: settings.invitationRateLimitPerHour, windowSeconds: 3600 });
      if (!hit.allowed) throw organizationInvitationRateLimited(hit.retryAfterSeconds);
      const email = normalizeEmail(body.email);
      const token = randomToken('orginv_');
      const acceptUrl = settings.invitationAcceptUrl;
      const invitation = await inTransaction(db, async (trx) => {
        const txStore = createOrganizationInvitationsStore(trx);
        const now = clock.now();
        await txStore.lockEmail(environmentId, organizationId, email);
        await txStore.expirePendingFor(environmentId, organizationId, email, now);
        const replaced = await txStore.revokePendingFor(environmentId, organizationId, email, now);
        const created = await txStore.insert(environmentId, {
          organizationId, email, role: body.role, tokenHash: sha256(token), inviterUserId: inviterId, expiresAt: new Date(now.getTime() + EXPIRES_IN_MS),
        }, now);
        // Queued with the token it carries: the mail goes out if and only if the invitation is stored.
        if (acceptUrl) await mailer.send(environmentId, organizationInvitationMail(email, organizationName, body.role, acceptLink(acceptUrl, token), new Date(created.expiresAt)), trx);
        for (const id of replaced) await record(trx, environmentId, 'organization_invitation.revoked', organizationId, id, by, { reason: 'replaced', replacedBy: created.id });
        await record(trx, environmentId, 'organization_invitation.created', organizationId, created.id, by, { role: body.role });
        return created;
      });
      const { id, expiresAt } = invitation;
      return { id, organizationId, email, role: body.role, token, expiresAt, emailDelivery: acceptUrl ? 'dispatched' : 'not_configured' };
    },

    async listPending(environmentId: string, organizationId: string, userId: string, page: OrganizationPageQuery) {
      await asManager(environmentId, organizationId, userId);
      return store.listPending(environmentId, organizationId, page, clock.now());
    },

    /** PENDING → REVOKED; any other state is 409 with the current status. */
    async revoke(environmentId: string, organizationId: string, userId: string, invitationId: string, by: Caller) {
      await asManager(environmentId, organizationId, userId);
      const revoked = await inTransaction(db, async (trx) => {
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
      const pending = await pendingByToken(environmentId, token);
      const user = await users.get(environmentId, userId);
      if (!user.emailVerifiedAt || user.email !== pending.email) throw emailMismatch();
      return inTransaction(db, async (trx) => {
        const member = await acceptOrganizationInvitation(trx, environmentId, pending.organizationId, pending.tokenHash, userId, pending.role, userCaller(userId, context), clock.now());
        if (member === 'already_member') throw alreadyMember();
        if (!member) throw userNotActive();
        return { organizationId: member.organizationId, userId, role: member.role, roleName: member.roleName, joinedAt: member.joinedAt };
      });
    },
    pendingByToken,
  };
}
export type OrganizationInvitationsService = ReturnType<typeof createOrganizationInvitationsService>;
