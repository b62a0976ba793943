-- SCIM 2.0 provisioning (RFC 7643/7644): a directory connects an identity provider (Okta, Entra ID) to one
-- organization. Its bearer token is stored as SHA-256 only, like a secret key, and found by that hash.
-- group_roles maps a SCIM group's displayName to a role key of the organization.
CREATE TABLE scim_directories (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  organization_id uuid NOT NULL,
  name text NOT NULL,
  token_hash bytea NOT NULL,
  group_roles jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, organization_id) REFERENCES organizations (environment_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX scim_directories_token_hash_key ON scim_directories (token_hash);
CREATE INDEX scim_directories_organization ON scim_directories (environment_id, organization_id, id);

-- A user as a directory provisioned it: the SCIM userName and externalId the provider sent, and whether the
-- directory created the Gatehouse user (then a SCIM DELETE deletes it) or linked an existing one by email.
CREATE TABLE scim_users (
  environment_id uuid NOT NULL,
  directory_id uuid NOT NULL,
  user_id uuid NOT NULL,
  user_name text NOT NULL,
  external_id text,
  created_user boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, directory_id, user_id),
  FOREIGN KEY (environment_id, directory_id) REFERENCES scim_directories (environment_id, id) ON DELETE CASCADE,
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
-- userName is unique per directory, compared case-insensitively (RFC 7643 §4.1.1: caseExact false).
CREATE UNIQUE INDEX scim_users_user_name_key ON scim_users (environment_id, directory_id, lower(user_name));
CREATE UNIQUE INDEX scim_users_external_id_key ON scim_users (environment_id, directory_id, external_id) WHERE external_id IS NOT NULL;

CREATE TABLE scim_groups (
  environment_id uuid NOT NULL,
  directory_id uuid NOT NULL,
  id uuid NOT NULL,
  display_name text NOT NULL,
  external_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, directory_id, id),
  FOREIGN KEY (environment_id, directory_id) REFERENCES scim_directories (environment_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX scim_groups_display_name_key ON scim_groups (environment_id, directory_id, lower(display_name));
CREATE UNIQUE INDEX scim_groups_external_id_key ON scim_groups (environment_id, directory_id, external_id) WHERE external_id IS NOT NULL;

CREATE TABLE scim_group_members (
  environment_id uuid NOT NULL,
  directory_id uuid NOT NULL,
  group_id uuid NOT NULL,
  user_id uuid NOT NULL,
  PRIMARY KEY (environment_id, directory_id, group_id, user_id),
  FOREIGN KEY (environment_id, directory_id, group_id) REFERENCES scim_groups (environment_id, directory_id, id) ON DELETE CASCADE,
  FOREIGN KEY (environment_id, directory_id, user_id) REFERENCES scim_users (environment_id, directory_id, user_id) ON DELETE CASCADE
);
-- A user's groups (the role they map to).
CREATE INDEX scim_group_members_user ON scim_group_members (environment_id, directory_id, user_id);
