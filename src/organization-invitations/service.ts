import { recordOwnEvent } from '../audit/service.js';
import type { EnvironmentsService } from '../environments/service.js';
import { mailBrand, organizationInvitationAcceptUrl } from '../environments/settings.js';
import { alreadyMember, userNotActive } from '../organizations/errors.js';
import { authorize } from '../organizations/policy.js';
import type { Role } from '../organizations/roles.js';
import { joinOrganization, lockOrganization, type OrganizationsService } from '../organizations/service.js';
import { userCaller, type Caller, type RequestContext } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import { isLocale, type Locale } from '../platform/i18n/catalogue.js';
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
  // The inviter may have left since the token was read (pendingByToken): refused all the same.
  await invitations.revokeIfInviterLeft(environmentId, tokenHash, now);
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
  organizations: Pick<OrganizationsService, 'get' | 'memberOf' | 'authorizeIn' | 'roleOf'>;
  users: Pick<UsersService, 'get' | 'findCredentials'>;
}

const EXPIRES_IN_MS = 30 * 86_400_000;

/** Organization invitations: members whose role has invitations:manage invite by email with a role; the invitee accepts or signs up with the token. */
export function createOrganizationInvitationsService({ db, clock, mailer, limiter, environments, organizations, users }: OrganizationInvitationsDeps) {
  const store = createOrganizationInvitationsStore(db);

  const record = (trx: Db, environmentId: string, action: string, organizationId: string, invitationId: string, by: Caller, metadata = {}) =>
    recordInvitationEvent(trx, environmentId, action, organizationId, invitationId, by, clock.now(), metadata);

  /**
   * Counts an invitation against the environment's hourly limit inside the inviting transaction, after
   * the checks: a refused or failed invitation rolls its hit back, so only stored invitations count.
   */
  async function countInvitation(trx: Db, environmentId: string, max: number) {
    const hit = limiter.prepareHit(environmentId, 'organization_invitations', { max, windowSeconds: 3600 });
    const result = hit.result((await hit.statement.execute(trx)).rows[0]?.count);
    if (!result.allowed) throw organizationInvitationRateLimited(result.retryAfterSeconds);
  }

  /**
   * The pending invitation a token names, with the role it grants; 404, 409 or 410 naming its state
   * otherwise. One whose inviter has left the organization is revoked here, for good.
   */
  async function pendingByToken(environmentId: string, token: string) {
    const tokenHash = sha256(token);
    await store.revokeIfInviterLeft(environmentId, tokenHash, clock.now());
    const found = await store.findByToken(environmentId, tokenHash, clock.now());
    if (found?.status !== 'PENDING') throw tokenUnusable(found?.status);
    return { tokenHash, email: found.email, organizationId: found.organizationId, role: await organizations.roleOf(environmentId, found.organizationId, found.role) };
  }

  return {
    /**
     * Invites an email with a role (invitations:manage; only to a role carrying no permission the
     * inviter's lacks, so only an owner invites an owner). The token is shown once; with the environment's
     * invitationAcceptUrl (or hosted page) a mail carries it, otherwise nothing is sent. A pending invitation of the same
     * email to the organization is replaced. The mail is in the invitee's language when the email has an
     * account with one, else in `requestLocale` (the inviting request's Accept-Language). A null inviter
     * is the Server API (a backend or an operator): no membership is needed, and the invitation outlives
     * any member.
     */
    async create(environmentId: string, organizationId: string, inviterId: string | null, body: CreateOrganizationInvitationBody, by: Caller, requestLocale: Locale = 'en'): Promise<CreatedOrganizationInvitation> {
      const env = await environments.record(environmentId);
      const { settings } = env;
      const email = normalizeEmail(body.email);
      const token = randomToken('orginv_');
      const acceptUrl = organizationInvitationAcceptUrl(env);
      const inviteeLocale = acceptUrl ? (await users.findCredentials(environmentId, email))?.user.locale : undefined;
      // A role set never changes, so the role checked before the transaction is still the set's inside it.
      if (inviterId === null) await organizations.roleOf(environmentId, organizationId, body.role);
      const locale = isLocale(inviteeLocale) ? inviteeLocale : requestLocale;
      const invitation = await inTransaction(db, async (trx) => {
        // The inviter's role is read under the organization lock that role changes take: a demotion either
        // lands before this check or waits until the invitation is stored. A deleted organization is 404 here.
        const organization = await lockOrganization(trx, environmentId, organizationId);
        if (inviterId !== null) await organizations.authorizeIn(trx, environmentId, organization, inviterId, 'invitations.invite', { grants: body.role });
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
        if (acceptUrl) {
          const mail = organizationInvitationMail(email, mailBrand(env), locale, organization.name, body.role, acceptLink(acceptUrl, token), new Date(created.expiresAt));
          await mailer.send(environmentId, mail, trx);
        }
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
    async listPending(environmentId: string, organizationId: string, userId: string | null, page: OrganizationPageQuery) {
      if (userId === null) await organizations.get(environmentId, organizationId);
      else authorize(await organizations.memberOf(environmentId, organizationId, userId), 'invitations.manage');
      return store.listPending(environmentId, organizationId, page, clock.now());
    },

    /**
     * PENDING → REVOKED (a member needs invitations:manage, checked under the organization lock; a null
     * userId is the Server API); any other state is 409 with the current status.
     */
    async revoke(environmentId: string, organizationId: string, userId: string | null, invitationId: string, by: Caller) {
      const revoked = await inTransaction(db, async (trx) => {
        const organization = await lockOrganization(trx, environmentId, organizationId);
        if (userId !== null) await organizations.authorizeIn(trx, environmentId, organization, userId, 'invitations.manage');
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
