-- Role sets an operator defines per environment; organizations without one use the default set
-- (owner, admin, member). A set never changes once created, so a membership keeps its role's name.
CREATE TABLE organization_role_sets (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  name text NOT NULL,
  roles jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id)
);

-- Organizations and their USER memberships. An organization is deleted for good (its memberships with it);
-- a membership is one row per user and organization, so "one membership per user" is the primary key.
CREATE TABLE organizations (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  name text NOT NULL,
  slug text,
  role_set_id uuid,
  public_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  private_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, role_set_id) REFERENCES organization_role_sets (environment_id, id)
) WITH (fillfactor = 90);
CREATE UNIQUE INDEX organizations_slug_key ON organizations (environment_id, slug) WHERE slug IS NOT NULL;
-- Name search is a case-insensitive literal substring: a trigram index on the lower-cased name serves it.
CREATE INDEX organizations_name_trgm ON organizations USING gin (lower(name) gin_trgm_ops);

CREATE TABLE organization_memberships (
  environment_id uuid NOT NULL,
  organization_id uuid NOT NULL,
  user_id uuid NOT NULL,
  role text NOT NULL,
  role_name text,
  public_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  private_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, organization_id, user_id),
  FOREIGN KEY (environment_id, organization_id) REFERENCES organizations (environment_id, id) ON DELETE CASCADE,
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
) WITH (fillfactor = 90);
-- A user's organizations, in organization id order (the seek key of that list).
CREATE INDEX organization_memberships_user ON organization_memberships (environment_id, user_id, organization_id);
