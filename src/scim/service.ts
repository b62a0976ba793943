import { recordOwnEvent } from '../audit/service.js';
import type { OrganizationsService } from '../organizations/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import type { JsonObject } from '../platform/json.js';
import { directoryNotFound } from './errors.js';
import { isUuid } from '../platform/ids.js';
import type { CreateDirectoryBody, Directory, DirectoryWithToken, UpdateDirectoryBody } from './schemas.js';
import { createScimStore } from './store.js';

export interface DirectoriesDeps {
  db: Db; clock: Clock; organizations: Pick<OrganizationsService, 'get' | 'roleOf'>;
  /** GATEHOUSE_BASE_URL: the origin people reach the service at, which makes scimBaseUrl whole; without it, scimBaseUrl is a path. */
  baseUrl?: string | undefined;
}

/** The directory a SCIM request's path names and its token opened, with its environment. */
export type AuthenticatedDirectory = Directory & { environmentId: string };

const TOKEN_PREFIX = 'scim_';
export const scimBasePath = (directoryId: string) => `/scim/v2/${directoryId}`;

/**
 * SCIM directories on the Server API: one per identity provider and organization. The token is 256 random bits,
 * shown once (on create and on rotation); only its SHA-256 is stored, and a request's token is found by that hash.
 */
export function createDirectoriesService({ db, clock, organizations, baseUrl = '' }: DirectoriesDeps) {
  const store = createScimStore(db);

  async function existing(environmentId: string, organizationId: string, directoryId: string) {
    await organizations.get(environmentId, organizationId);
    const directory = await store.findDirectory(environmentId, organizationId, directoryId);
    if (!directory) throw directoryNotFound();
    return directory;
  }

  /** 400 invalid_role unless every mapped role is one of the organization's. */
  async function checkGroupRoles(environmentId: string, organizationId: string, groupRoles: Record<string, string> | undefined) {
    for (const role of new Set(Object.values(groupRoles ?? {}))) await organizations.roleOf(environmentId, organizationId, role);
  }

  const record = (trx: Db, environmentId: string, action: string, directory: Directory, by: Caller, metadata: JsonObject = {}) =>
    recordOwnEvent(trx, environmentId, {
      action, ...by, metadata,
      targets: [{ type: 'scim_directory', id: directory.id }, { type: 'organization', id: directory.organizationId }],
    }, clock.now());

  const withToken = (directory: Directory, token: string): DirectoryWithToken => ({ ...directory, token, scimBaseUrl: baseUrl + scimBasePath(directory.id) });

  return {
    async create(environmentId: string, organizationId: string, body: CreateDirectoryBody, by: Caller): Promise<DirectoryWithToken> {
      await organizations.get(environmentId, organizationId);
      await checkGroupRoles(environmentId, organizationId, body.groupRoles);
      const token = randomToken(TOKEN_PREFIX);
      return inTransaction(db, async (trx) => {
        const scim = createScimStore(trx);
        let directory = await scim.insertDirectory(environmentId, organizationId, body.name, sha256(token), clock.now());
        if (body.groupRoles) directory = (await scim.updateDirectory(environmentId, directory.id, { groupRoles: body.groupRoles }, clock.now()))!;
        await record(trx, environmentId, 'scim_directory.created', directory, by, { name: directory.name });
        return withToken(directory, token);
      });
    },
    async list(environmentId: string, organizationId: string) {
      await organizations.get(environmentId, organizationId);
      return { items: await store.listDirectories(environmentId, organizationId) };
    },
    get: existing,
    async update(environmentId: string, organizationId: string, directoryId: string, body: UpdateDirectoryBody, by: Caller) {
      await existing(environmentId, organizationId, directoryId);
      await checkGroupRoles(environmentId, organizationId, body.groupRoles);
      return inTransaction(db, async (trx) => {
        const directory = await createScimStore(trx).updateDirectory(environmentId, directoryId, body, clock.now());
        if (!directory) throw directoryNotFound();
        await record(trx, environmentId, 'scim_directory.updated', directory, by, { changedFields: Object.keys(body).sort() });
        return directory;
      });
    },
    /** A new token; the old one stops working at once (identity providers take the new one in their settings). */
    async rotateToken(environmentId: string, organizationId: string, directoryId: string, by: Caller): Promise<DirectoryWithToken> {
      await existing(environmentId, organizationId, directoryId);
      const token = randomToken(TOKEN_PREFIX);
      return inTransaction(db, async (trx) => {
        const directory = await createScimStore(trx).updateDirectory(environmentId, directoryId, { tokenHash: sha256(token) }, clock.now());
        if (!directory) throw directoryNotFound();
        await record(trx, environmentId, 'scim_directory.token_rotated', directory, by);
        return withToken(directory, token);
      });
    },
    /** Deletes the directory, its groups and its links; the users it provisioned stay, with their memberships. */
    async delete(environmentId: string, organizationId: string, directoryId: string, by: Caller) {
      const directory = await existing(environmentId, organizationId, directoryId);
      await inTransaction(db, async (trx) => {
        if (!(await createScimStore(trx).deleteDirectory(environmentId, directoryId))) throw directoryNotFound();
        await record(trx, environmentId, 'scim_directory.deleted', directory, by, { name: directory.name });
      });
    },
    /** The directory of a SCIM request: its path's id and its bearer token must match; undefined otherwise. */
    async authenticate(directoryId: string, token: string): Promise<AuthenticatedDirectory | undefined> {
      if (!token.startsWith(TOKEN_PREFIX) || !isUuid(directoryId)) return undefined;
      return store.findByToken(directoryId, sha256(token));
    },
  };
}
export type DirectoriesService = ReturnType<typeof createDirectoriesService>;
