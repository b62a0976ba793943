import { recordOwnEvent } from '../audit/service.js';
import { frontendUrl } from '../environments/origins.js';
import type { EnvironmentsService } from '../environments/service.js';
import { endpointProblem } from '../oauth/presets.js';
import type { OrganizationsService } from '../organizations/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/encryption.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { JsonObject } from '../platform/json.js';
import { normalizeEmail } from '../users/accounts.js';
import { connectionNotFound, idpMetadataUnavailable, invalidConnection, ssoRequired } from './errors.js';
import { fetchMetadata, parseIdpMetadata, toPem, type IdpDescription } from './metadata.js';
import type { Connection, CreateConnectionBody, UpdateConnectionBody } from './schemas.js';
import { createSsoStore, enforcedConnectionCovers, type ConnectionChanges, type ConnectionRecord } from './store.js';

export interface SsoConnectionsDeps {
  db: Db; clock: Clock; sealer: Sealer; environments: Pick<EnvironmentsService, 'record'>;
  organizations: Pick<OrganizationsService, 'get' | 'roleOf'>; metadataTimeoutMs: number;
}

const DEFAULT_SCOPES = ['openid', 'email', 'profile'];
const SAML_FIELDS = ['idpMetadataXml', 'idpMetadataUrl', 'idpEntityId', 'idpSsoUrl', 'idpCertificate'] as const;
const OIDC_FIELDS = ['issuer', 'clientId', 'clientSecret', 'scopes'] as const;

/** Where a connection's sign-in runs, on the environment's frontend host: /_svc/auth/sso/{id}/{endpoint}. */
export const ssoUrl = (frontendHost: string, connectionId: string, endpoint: 'metadata' | 'acs' | 'callback') =>
  `${frontendUrl(frontendHost)}/_svc/auth/sso/${connectionId}/${endpoint}`;

/**
 * Whether users with this email must sign in through their organization's IdP: an enabled, enforced connection
 * of an organization that verified the email's domain. Every other way in (password, code, passkey, social
 * sign-in, invitation sign-up) asks it first; a user without an email has no domain to enforce.
 */
export const ssoEnforcedFor = async (db: Db, environmentId: string, email: string | null) =>
  email !== null && createSsoStore(db).isEnforcedFor(environmentId, normalizeEmail(email));
/** 403 sso_required for an email whose organization enforces its SSO connection: about the domain, never the account. */
export async function refuseWhereSsoIsEnforced(db: Db, environmentId: string, email: string | null) {
  if (await ssoEnforcedFor(db, environmentId, email)) throw ssoRequired();
}
/** The same question as a condition the password sign-in's first statement reads. */
export const ssoEnforcedCondition = (environmentId: string, email: string) => enforcedConnectionCovers(environmentId, normalizeEmail(email));

/** Erasure, in the caller's transaction: the user's links to IdP subjects; a later SSO sign-in starts over. Answers how many there were. */
export async function deleteSsoIdentities(trx: Db, environmentId: string, userId: string) {
  const result = await createSsoStore(trx).deleteIdentitiesOfUser(environmentId, userId);
  return Number(result[0]?.numDeletedRows ?? 0n);
}

export function toConnection(row: ConnectionRecord, frontendHost: string): Connection {
  const saml = row.type === 'saml';
  return {
    id: row.id, organizationId: row.organization_id, type: row.type, name: row.name, enabled: row.enabled, enforced: row.enforced,
    groupsAttribute: row.groups_attribute, groupRoles: row.group_roles as Record<string, string>,
    spEntityId: saml ? ssoUrl(frontendHost, row.id, 'metadata') : null, acsUrl: saml ? ssoUrl(frontendHost, row.id, 'acs') : null,
    metadataUrl: saml ? ssoUrl(frontendHost, row.id, 'metadata') : null,
    idpEntityId: row.idp_entity_id, idpSsoUrl: row.idp_sso_url, idpMetadataUrl: row.idp_metadata_url, idpCertificateCount: row.idp_certificates?.length ?? null,
    issuer: row.issuer, clientId: row.client_id, scopes: row.scopes, redirectUri: saml ? null : ssoUrl(frontendHost, row.id, 'callback'),
    createdAt: row.created_at.toISOString(), updatedAt: row.updated_at.toISOString(),
  };
}

type SamlInput = Partial<Record<typeof SAML_FIELDS[number], string>>;

/** An organization's SSO connections on the Server API; the IdP's metadata is read (and fetched) when it is given, never at sign-in. */
export function createSsoConnectionsService({ db, clock, sealer, environments, organizations, metadataTimeoutMs }: SsoConnectionsDeps) {
  const store = createSsoStore(db);

  /**
   * The IdP a SAML body describes: its metadata (XML, or fetched from the URL), else the three fields given
   * one by one (over what `current` had). 400 naming the field when it is incomplete or wrong.
   */
  async function samlIdp(input: SamlInput, current?: IdpDescription): Promise<Partial<ConnectionChanges>> {
    if (input.idpMetadataUrl) {
      const problem = endpointProblem(input.idpMetadataUrl);
      if (problem) throw invalidConnection([{ path: '/idpMetadataUrl', message: problem }]);
    }
    let xml = input.idpMetadataXml;
    if (!xml && input.idpMetadataUrl) {
      const fetched = await fetchMetadata(input.idpMetadataUrl, metadataTimeoutMs);
      if ('reason' in fetched) throw idpMetadataUnavailable(input.idpMetadataUrl, fetched.reason);
      xml = fetched.xml;
    }
    if (xml) {
      const idp = parseIdpMetadata(xml);
      if ('problem' in idp) throw invalidConnection([{ path: input.idpMetadataXml ? '/idpMetadataXml' : '/idpMetadataUrl', message: `the metadata ${idp.problem}` }]);
      return { idp_entity_id: idp.entityId, idp_sso_url: idp.ssoUrl, idp_certificates: idp.certificates, idp_metadata_url: input.idpMetadataUrl ?? null };
    }
    const certificate = input.idpCertificate === undefined ? undefined : toPem(input.idpCertificate);
    const errors = [
      ...(input.idpCertificate !== undefined && !certificate ? [{ path: '/idpCertificate', message: 'is not a PEM or base64 X.509 certificate' }] : []),
      ...(input.idpSsoUrl && endpointProblem(input.idpSsoUrl) ? [{ path: '/idpSsoUrl', message: endpointProblem(input.idpSsoUrl)! }] : []),
    ];
    const idp = { entityId: input.idpEntityId ?? current?.entityId, ssoUrl: input.idpSsoUrl ?? current?.ssoUrl, certificates: certificate ? [certificate] : current?.certificates };
    if (errors.length === 0 && (!idp.entityId || !idp.ssoUrl || !idp.certificates)) {
      errors.push({ path: '/idpMetadataXml', message: 'give idpMetadataXml, idpMetadataUrl, or idpEntityId, idpSsoUrl and idpCertificate' });
    }
    if (errors.length > 0) throw invalidConnection(errors);
    return { idp_entity_id: idp.entityId, idp_sso_url: idp.ssoUrl, idp_certificates: idp.certificates };
  }

  function oidcProblems(body: { issuer?: string }) {
    const problem = body.issuer && endpointProblem(body.issuer);
    if (problem) throw invalidConnection([{ path: '/issuer', message: problem }]);
  }

  /** A new OpenID Connect connection's client: 400 naming what is missing. */
  function oidcClient(body: CreateConnectionBody) {
    const missing = (['issuer', 'clientId', 'clientSecret'] as const).filter((field) => !body[field]);
    if (missing.length > 0) throw invalidConnection(missing.map((field) => ({ path: `/${field}`, message: 'is required for an oidc connection' })));
    oidcProblems(body);
    return { issuer: body.issuer!, client_id: body.clientId!, client_secret_sealed: sealer.seal(Buffer.from(body.clientSecret!)), scopes: body.scopes ?? DEFAULT_SCOPES };
  }

  /** 400 naming the fields that belong to the other type of connection. */
  function refuseOtherType(type: 'saml' | 'oidc', body: Omit<CreateConnectionBody, 'type'>) {
    const foreign = (type === 'saml' ? OIDC_FIELDS : SAML_FIELDS).filter((field) => body[field] !== undefined);
    if (foreign.length > 0) throw invalidConnection(foreign.map((field) => ({ path: `/${field}`, message: `is not a field of a ${type} connection` })));
  }

  /** 400 invalid_role unless every mapped role is one of the organization's. */
  async function checkGroupRoles(environmentId: string, organizationId: string, groupRoles: Record<string, string> | undefined) {
    for (const role of new Set(Object.values(groupRoles ?? {}))) await organizations.roleOf(environmentId, organizationId, role);
  }

  async function existing(environmentId: string, organizationId: string, connectionId: string) {
    await organizations.get(environmentId, organizationId);
    const row = await store.findConnection(environmentId, organizationId, connectionId);
    if (!row) throw connectionNotFound();
    return row;
  }

  const record = (trx: Db, environmentId: string, action: string, row: ConnectionRecord, by: Caller, metadata: JsonObject = {}) =>
    recordOwnEvent(trx, environmentId, {
      action, ...by, metadata: { type: row.type, ...metadata },
      targets: [{ type: 'organization', id: row.organization_id }, { type: 'sso_connection', id: row.id }],
    }, clock.now());

  const frontendHostOf = async (environmentId: string) => (await environments.record(environmentId)).frontendHost;

  return {
    async create(environmentId: string, organizationId: string, body: CreateConnectionBody, by: Caller): Promise<Connection> {
      await organizations.get(environmentId, organizationId);
      await checkGroupRoles(environmentId, organizationId, body.groupRoles);
      const common = {
        type: body.type, name: body.name ?? (body.type === 'saml' ? 'SAML' : 'OpenID Connect'), enabled: body.enabled ?? true, enforced: body.enforced ?? false,
        groups_attribute: body.groupsAttribute ?? 'groups', group_roles: body.groupRoles ?? {},
      };
      refuseOtherType(body.type, body);
      const values = { ...common, ...(body.type === 'saml' ? await samlIdp(body) : oidcClient(body)) };
      const row = await inTransaction(db, async (trx) => {
        const inserted = await createSsoStore(trx).insertConnection(environmentId, organizationId, values, clock.now());
        await record(trx, environmentId, 'sso_connection.created', inserted, by, { name: inserted.name, enforced: inserted.enforced });
        return inserted;
      });
      return toConnection(row, await frontendHostOf(environmentId));
    },
    async list(environmentId: string, organizationId: string) {
      await organizations.get(environmentId, organizationId);
      const frontendHost = await frontendHostOf(environmentId);
      return { items: (await store.listConnections(environmentId, organizationId)).map((row) => toConnection(row, frontendHost)) };
    },
    async get(environmentId: string, organizationId: string, connectionId: string) {
      return toConnection(await existing(environmentId, organizationId, connectionId), await frontendHostOf(environmentId));
    },
    async update(environmentId: string, organizationId: string, connectionId: string, body: UpdateConnectionBody, by: Caller): Promise<Connection> {
      const current = await existing(environmentId, organizationId, connectionId);
      refuseOtherType(current.type, body);
      await checkGroupRoles(environmentId, organizationId, body.groupRoles);
      const changes: ConnectionChanges = {
        ...(body.name !== undefined && { name: body.name }), ...(body.enabled !== undefined && { enabled: body.enabled }),
        ...(body.enforced !== undefined && { enforced: body.enforced }), ...(body.groupsAttribute !== undefined && { groups_attribute: body.groupsAttribute }),
        ...(body.groupRoles !== undefined && { group_roles: body.groupRoles }),
      };
      if (current.type === 'saml' && SAML_FIELDS.some((field) => body[field] !== undefined)) {
        Object.assign(changes, await samlIdp(body, { entityId: current.idp_entity_id!, ssoUrl: current.idp_sso_url!, certificates: current.idp_certificates! }));
      }
      if (current.type === 'oidc') {
        oidcProblems(body);
        Object.assign(changes, {
          ...(body.issuer !== undefined && { issuer: body.issuer }), ...(body.clientId !== undefined && { client_id: body.clientId }),
          ...(body.clientSecret !== undefined && { client_secret_sealed: sealer.seal(Buffer.from(body.clientSecret)) }), ...(body.scopes !== undefined && { scopes: body.scopes }),
        });
      }
      const row = await inTransaction(db, async (trx) => {
        const updated = await createSsoStore(trx).updateConnection(environmentId, organizationId, connectionId, changes, clock.now());
        if (!updated) throw connectionNotFound();
        await record(trx, environmentId, 'sso_connection.updated', updated, by, { changedFields: Object.keys(body).sort() });
        return updated;
      });
      return toConnection(row, await frontendHostOf(environmentId));
    },
    /** Deletes the connection and its links to users; the users and their memberships stay. */
    async delete(environmentId: string, organizationId: string, connectionId: string, by: Caller) {
      await existing(environmentId, organizationId, connectionId);
      await inTransaction(db, async (trx) => {
        const deleted = await createSsoStore(trx).deleteConnection(environmentId, organizationId, connectionId);
        if (!deleted) throw connectionNotFound();
        await record(trx, environmentId, 'sso_connection.deleted', deleted, by, { name: deleted.name });
      });
    },
    pruneExpired: () => store.pruneExpired(clock.now()),
  };
}
export type SsoConnectionsService = ReturnType<typeof createSsoConnectionsService>;
