import type { Generated } from 'kysely';

type Json = Record<string, unknown>;

/**
 * The rows of migrations 0031 and 0034. They join the database's table types by declaration merging, so this domain's
 * tables live in its own folder (the same interface, typed once; Kysely sees them like any other table).
 */
export interface ScimDirectoryRow {
  environment_id: string; id: string; organization_id: string; name: string; token_hash: Buffer;
  group_roles: Json; created_at: Date; updated_at: Date;
}
export interface ScimUserRow {
  environment_id: string; directory_id: string; user_id: string; user_name: string; external_id: string | null;
  created_user: boolean; created_at: Date; updated_at: Date;
  /** Migration 0034: this directory banned the user (`active: false`), so its `active: true` may lift the ban. */
  banned_by_directory: Generated<boolean>;
}
export interface ScimGroupRow {
  environment_id: string; directory_id: string; id: string; display_name: string; external_id: string | null;
  created_at: Date; updated_at: Date;
}
export interface ScimGroupMemberRow { environment_id: string; directory_id: string; group_id: string; user_id: string }

declare module '../platform/db/tables.js' {
  interface Tables {
    scim_directories: ScimDirectoryRow;
    scim_users: ScimUserRow;
    scim_groups: ScimGroupRow;
    scim_group_members: ScimGroupMemberRow;
  }
}
