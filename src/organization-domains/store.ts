import { sql, type Selectable } from 'kysely';
import { uuidv7 } from 'uuidv7';
import { isUniqueViolation, type Db } from '../platform/db/database.js';
import type { DomainEnrollment, OrganizationDomainRow } from '../platform/db/tables.js';
import { toPage } from '../platform/http/pagination.js';
import type { OrganizationPageQuery } from '../organizations/schemas.js';
import { verificationRecordName } from './names.js';
import type { OrganizationDomain, OrganizationSuggestion } from './schemas.js';

const ORGANIZATION_DOMAIN_KEY = 'organization_domains_organization_domain_key';
const VERIFIED_KEY = 'organization_domains_verified_key';

export interface NewDomain { organizationId: string; domain: string; enrollment: DomainEnrollment; token: string }

/** A user's verified email domain, as the suggestion and enrollment queries compare it. */
const emailDomainOf = sql<string>`substring(u.email from '@([^@]*)$')`;

export function createOrganizationDomainsStore(db: Db) {
  const byId = (environmentId: string, organizationId: string, id: string) =>
    db.updateTable('organization_domains').where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('id', '=', id);

  /** Organizations a user may join by a verified domain of their verified primary email, where they are not a member. */
  const suggestionsQuery = (environmentId: string, userId: string) =>
    db.selectFrom('users as u')
      .innerJoin('organization_domains as d', (join) => join.onRef('d.environment_id', '=', 'u.environment_id').on('d.domain', '=', emailDomainOf))
      .innerJoin('organizations as o', (join) => join.onRef('o.environment_id', '=', 'd.environment_id').onRef('o.id', '=', 'd.organization_id'))
      .select(['o.id', 'o.name', 'o.slug', 'd.domain', 'd.enrollment'])
      .where('u.environment_id', '=', environmentId).where('u.id', '=', userId)
      .where('u.status', '=', 'active').where('u.email_verified_at', 'is not', null)
      .where('d.verified_at', 'is not', null).where('d.enrollment', 'in', ['suggest', 'automatic'])
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('organization_memberships as m').select('m.user_id')
        .whereRef('m.environment_id', '=', 'u.environment_id').whereRef('m.organization_id', '=', 'o.id').whereRef('m.user_id', '=', 'u.id'))));

  return {
    /** Whether the organization has verified this domain (the domain as stored: lower case). */
    isVerifiedBy: async (environmentId: string, organizationId: string, domain: string) =>
      (await db.selectFrom('organization_domains').select('id').where('environment_id', '=', environmentId).where('organization_id', '=', organizationId)
        .where('domain', '=', domain).where('verified_at', 'is not', null).executeTakeFirst()) !== undefined,
    /**
     * Adds the domain unless another organization of the environment has verified it ('taken', decided in the
     * statement itself); 'already_added' when this organization lists it already.
     */
    async insert(environmentId: string, values: NewDomain, now: Date): Promise<OrganizationDomain | 'taken' | 'already_added'> {
      try {
        const { rows } = await sql<Selectable<OrganizationDomainRow>>`
          insert into organization_domains (environment_id, id, organization_id, domain, enrollment, verification_token, created_at, updated_at)
          select ${environmentId}::uuid, ${uuidv7()}::uuid, ${values.organizationId}::uuid, ${values.domain}, ${values.enrollment}, ${values.token},
                 ${now}::timestamptz, ${now}::timestamptz
          where not exists (select from organization_domains v where v.environment_id = ${environmentId} and v.domain = ${values.domain}
                              and v.verified_at is not null and v.organization_id <> ${values.organizationId})
          returning *`.execute(db);
        return rows[0] ? toDomain(rows[0]) : 'taken';
      } catch (err) {
        if (isUniqueViolation(err, ORGANIZATION_DOMAIN_KEY)) return 'already_added';
        throw err;
      }
    },
    find: (environmentId: string, organizationId: string, id: string) =>
      db.selectFrom('organization_domains').selectAll()
        .where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('id', '=', id)
        .executeTakeFirst().then((row) => row && toDomain(row)),
    /** The organization's domains in id (creation) order. */
    async list(environmentId: string, organizationId: string, page: OrganizationPageQuery) {
      let query = db.selectFrom('organization_domains').selectAll().where('environment_id', '=', environmentId).where('organization_id', '=', organizationId);
      if (page.cursor) query = query.where('id', '>', page.cursor);
      const rows = await query.orderBy('id').limit(page.limit + 1).execute();
      return toPage(rows.map(toDomain), page.limit);
    },
    /** Marks an unverified domain verified; 'taken' when another organization verified it first (the partial unique index). */
    async markVerified(environmentId: string, organizationId: string, id: string, now: Date): Promise<OrganizationDomain | 'taken' | undefined> {
      try {
        const row = await byId(environmentId, organizationId, id).where('verified_at', 'is', null)
          .set({ verified_at: now, updated_at: now }).returningAll().executeTakeFirst();
        return row && toDomain(row);
      } catch (err) {
        if (isUniqueViolation(err, VERIFIED_KEY)) return 'taken';
        throw err;
      }
    },
    /** The new enrollment with the one it replaced (read under the row lock the update takes); updatedAt moves only on a change. */
    setEnrollment: (environmentId: string, organizationId: string, id: string, enrollment: DomainEnrollment, now: Date) =>
      sql<Selectable<OrganizationDomainRow> & { previous: DomainEnrollment }>`
        update organization_domains d set enrollment = ${enrollment},
          updated_at = case when before.enrollment = ${enrollment} then d.updated_at else ${now}::timestamptz end
        from (select id, enrollment from organization_domains
              where environment_id = ${environmentId} and organization_id = ${organizationId} and id = ${id} for update) before
        where d.environment_id = ${environmentId} and d.id = before.id
        returning d.*, before.enrollment as previous`.execute(db)
        .then(({ rows: [row] }) => row && { domain: toDomain(row), previous: row.previous }),
    delete: (environmentId: string, organizationId: string, id: string) =>
      db.deleteFrom('organization_domains').where('environment_id', '=', environmentId).where('organization_id', '=', organizationId).where('id', '=', id)
        .returningAll().executeTakeFirst().then((row) => row && toDomain(row)),
    /** The verified domain with automatic enrollment for an email domain: at most one per environment. */
    findAutomatic: (environmentId: string, domain: string) =>
      db.selectFrom('organization_domains').select(['id', 'organization_id', 'domain'])
        .where('environment_id', '=', environmentId).where('domain', '=', domain)
        .where('verified_at', 'is not', null).where('enrollment', '=', 'automatic')
        .executeTakeFirst(),
    listSuggestions: (environmentId: string, userId: string) =>
      suggestionsQuery(environmentId, userId).orderBy('o.id').execute().then((rows) => rows.map(toSuggestion)),
    findSuggestion: (environmentId: string, userId: string, organizationId: string) =>
      suggestionsQuery(environmentId, userId).where('o.id', '=', organizationId).executeTakeFirst().then((row) => row && toSuggestion(row)),
  };
}

const toDomain = (row: Selectable<OrganizationDomainRow>): OrganizationDomain => ({
  id: row.id, organizationId: row.organization_id, domain: row.domain, enrollment: row.enrollment,
  verified: row.verified_at !== null, verifiedAt: row.verified_at?.toISOString() ?? null,
  verification: { type: 'dns_txt', name: verificationRecordName(row.domain), value: row.verification_token },
  createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString(),
});

const toSuggestion = (row: { id: string; name: string; slug: string | null; domain: string; enrollment: DomainEnrollment }): OrganizationSuggestion =>
  ({ organization: { id: row.id, name: row.name, slug: row.slug }, domain: row.domain, enrollment: row.enrollment });
