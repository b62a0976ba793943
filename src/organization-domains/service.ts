import { randomBytes } from 'node:crypto';
import { recordOwnEvent } from '../audit/service.js';
import { systemCaller, type Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { JsonObject } from '../platform/json.js';
import { alreadyMember } from '../organizations/errors.js';
import type { ClientOrganization, OrganizationPageQuery } from '../organizations/schemas.js';
import { enrollMember, lockOrganization, type OrganizationsService } from '../organizations/service.js';
import type { TxtLookup } from './dns.js';
import { domainAlreadyAdded, domainNotFound, domainNotVerified, domainTaken, invalidDomain, noSuggestion } from './errors.js';
import { emailDomain, normalizeDomain, verificationRecordName } from './names.js';
import type { CreateDomainBody, OrganizationDomain, UpdateDomainBody } from './schemas.js';
import { createOrganizationDomainsStore } from './store.js';

export interface OrganizationDomainsDeps { db: Db; clock: Clock; organizations: Pick<OrganizationsService, 'get'>; lookupTxt: TxtLookup }

/** Who enrolls a user by a verified domain: no person, the organization's setting. */
const ENROLLMENT = systemCaller('enrollment');

/** The change of a domain in the service's own trail, naming the organization first (webhook `data.id`), then the domain. */
const record = (trx: Db, environmentId: string, action: string, domain: OrganizationDomain, by: Caller, now: Date, metadata: JsonObject = {}) =>
  recordOwnEvent(trx, environmentId, {
    action, ...by, metadata: { domain: domain.domain, ...metadata },
    targets: [{ type: 'organization', id: domain.organizationId }, { type: 'organization_domain', id: domain.id }],
  }, now);

/**
 * Automatic enrollment, in the caller's transaction, after a change that may have verified a user's primary
 * email and after that change's own event (so a receiver learns of the user before of the membership): a
 * user created with a verified email, an email verified by a code, a provider or a password reset, or set
 * through the Server API. When the primary email became verified in this very change (its verification
 * time is the change's `now`, which the caller passes) and a verified domain with `automatic` enrollment
 * matches it, the user joins that organization with the default role. A user verified earlier is not
 * enrolled behind their back; they see the organization as a suggestion instead.
 */
/**
 * Whether the email is at a domain the organization has verified: the addresses an organization's own identity
 * provider (SCIM, SSO) speaks for.
 */
export const isAtVerifiedDomainOf = (db: Db, environmentId: string, organizationId: string, email: string) =>
  createOrganizationDomainsStore(db).isVerifiedBy(environmentId, organizationId, emailDomain(email).toLowerCase());

/** Whether a user created now with this verified email would join an organization (a verified domain with `automatic` enrollment). */
export const enrollsAutomatically = async (db: Db, environmentId: string, email: string) =>
  (await createOrganizationDomainsStore(db).findAutomatic(environmentId, emailDomain(email))) !== undefined;

export async function enrollByVerifiedEmail(trx: Db, environmentId: string, user: { id: string; status: string; email: string | null; emailVerifiedAt: string | null }, now: Date) {
  if (user.status !== 'active' || !user.email || user.emailVerifiedAt !== now.toISOString()) return;
  const domain = await createOrganizationDomainsStore(trx).findAutomatic(environmentId, emailDomain(user.email));
  if (!domain) return;
  await enrollMember(trx, environmentId, domain.organization_id, user.id, ENROLLMENT, now, { enrollment: 'automatic', domainId: domain.id, domain: domain.domain });
}

/** What this domain does at the users domain's lifecycle hooks (users/hooks.ts): a verified domain enrolls. */
export const organizationDomainsUserHooks = { enrollsAutomatically, enrollByVerifiedEmail };

/** Verified domains of organizations: adding, proving through DNS, enrollment settings, and the suggestions they make. */
export function createOrganizationDomainsService({ db, clock, organizations, lookupTxt }: OrganizationDomainsDeps) {
  const store = createOrganizationDomainsStore(db);

  async function existing(environmentId: string, organizationId: string, domainId: string) {
    const domain = await store.find(environmentId, organizationId, domainId);
    if (domain) return domain;
    await organizations.get(environmentId, organizationId); // 404 organization_not_found first, when that is what is missing
    throw domainNotFound();
  }

  /** Runs a change with the organization locked (404 when it is gone), so no deletion of it interleaves. */
  const withOrganization = <T>(environmentId: string, organizationId: string, change: (trx: Db) => Promise<T>) =>
    inTransaction(db, async (trx) => {
      await lockOrganization(trx, environmentId, organizationId);
      return change(trx);
    });

  return {
    /** Adds a domain, unverified; 409 domain_taken when another organization of the environment has verified it. */
    async create(environmentId: string, organizationId: string, body: CreateDomainBody, by: Caller) {
      const normalized = normalizeDomain(body.domain);
      if (!('domain' in normalized)) throw invalidDomain(normalized);
      return withOrganization(environmentId, organizationId, async (trx) => {
        const now = clock.now();
        const token = `gatehouse-domain-verification=${randomBytes(24).toString('base64url')}`;
        const added = await createOrganizationDomainsStore(trx).insert(environmentId, { organizationId, domain: normalized.domain, enrollment: body.enrollment ?? 'none', token }, now);
        if (added === 'taken') throw domainTaken(normalized.domain);
        if (added === 'already_added') throw domainAlreadyAdded(normalized.domain);
        await record(trx, environmentId, 'organization_domain.created', added, by, now, { enrollment: added.enrollment });
        return added;
      });
    },
    async list(environmentId: string, organizationId: string, page: OrganizationPageQuery) {
      await organizations.get(environmentId, organizationId);
      return store.list(environmentId, organizationId, page);
    },
    get: existing,
    /**
     * Looks the TXT record up now; verified when one of its values is the domain's token. An already
     * verified domain answers as it is. 422 domain_not_verified says what was looked up and found, or the
     * DNS error; 409 domain_taken when another organization verified the domain meanwhile.
     */
    async verify(environmentId: string, organizationId: string, domainId: string, by: Caller) {
      const domain = await existing(environmentId, organizationId, domainId);
      if (domain.verified) return domain;
      const name = verificationRecordName(domain.domain);
      const answer = await lookupTxt(name);
      const found = 'records' in answer ? answer.records : [];
      if (!found.includes(domain.verification.value)) {
        throw domainNotVerified(domain.domain, { name, expected: domain.verification.value, found, error: 'error' in answer ? answer.error : null });
      }
      const verified = await inTransaction(db, async (trx) => {
        const now = clock.now();
        const marked = await createOrganizationDomainsStore(trx).markVerified(environmentId, organizationId, domainId, now);
        if (marked === 'taken') throw domainTaken(domain.domain);
        if (marked) await record(trx, environmentId, 'organization_domain.verified', marked, by, now, { enrollment: marked.enrollment });
        return marked;
      });
      // Nothing marked: deleted meanwhile (404), or verified by a concurrent call (answered as it is).
      return verified ?? existing(environmentId, organizationId, domainId);
    },
    /** A new enrollment mode; recorded when it changed. */
    async update(environmentId: string, organizationId: string, domainId: string, body: UpdateDomainBody, by: Caller) {
      const changed = await inTransaction(db, async (trx) => {
        const now = clock.now();
        const result = await createOrganizationDomainsStore(trx).setEnrollment(environmentId, organizationId, domainId, body.enrollment, now);
        if (result && result.previous !== body.enrollment) {
          await record(trx, environmentId, 'organization_domain.updated', result.domain, by, now, { enrollment: body.enrollment, previousEnrollment: result.previous });
        }
        return result?.domain;
      });
      return changed ?? existing(environmentId, organizationId, domainId);
    },
    async delete(environmentId: string, organizationId: string, domainId: string, by: Caller) {
      const deleted = await inTransaction(db, async (trx) => {
        const gone = await createOrganizationDomainsStore(trx).delete(environmentId, organizationId, domainId);
        if (gone) await record(trx, environmentId, 'organization_domain.deleted', gone, by, clock.now(), { wasVerified: gone.verified });
        return gone;
      });
      if (!deleted) await existing(environmentId, organizationId, domainId);
    },

    /** The organizations the signed-in user may join by the verified domain of their verified primary email. */
    suggestions: async (environmentId: string, userId: string) => ({ items: await store.listSuggestions(environmentId, userId) }),
    /** Joins a suggested organization with its default role; 404 organization_not_found when it suggests nothing to the user. */
    join: (environmentId: string, userId: string, organizationId: string, by: Caller): Promise<ClientOrganization> =>
      inTransaction(db, async (trx) => {
        const suggestion = await createOrganizationDomainsStore(trx).findSuggestion(environmentId, userId, organizationId);
        if (!suggestion) throw noSuggestion();
        const joined = await enrollMember(trx, environmentId, organizationId, userId, by, clock.now(), { enrollment: suggestion.enrollment, domain: suggestion.domain });
        if (joined === 'already_member') throw alreadyMember();
        if (!joined) throw noSuggestion();
        const { member, organization } = joined;
        return { id: organization.id, name: organization.name, slug: organization.slug, role: member.role, roleName: member.roleName, createdAt: organization.createdAt };
      }),
  };
}
export type OrganizationDomainsService = ReturnType<typeof createOrganizationDomainsService>;
