-- Enterprise single sign-on per organization (SAML 2.0 and OpenID Connect connections). A connection belongs
-- to one organization; the organization's verified domains route an email to it. `enforced` refuses
-- passwords to users of those domains. group_roles maps a group the IdP sends in `groups_attribute` to a
-- role key of the organization (as SCIM directories do), for the membership a first sign-in provisions.
CREATE TABLE sso_connections (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  organization_id uuid NOT NULL,
  type text NOT NULL CHECK (type IN ('saml', 'oidc')),
  name text NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  enforced boolean NOT NULL DEFAULT false,
  groups_attribute text NOT NULL DEFAULT 'groups',
  group_roles jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- SAML: the IdP as its metadata describes it (kept parsed, so a sign-in never waits for the IdP's metadata URL).
  idp_entity_id text,
  idp_sso_url text,
  idp_certificates text[],
  idp_metadata_url text,
  -- OpenID Connect: the relying party's registration at the IdP; the secret sealed like OAuth providers'.
  issuer text,
  client_id text,
  client_secret_sealed bytea,
  scopes text[],
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, organization_id) REFERENCES organizations (environment_id, id) ON DELETE CASCADE
);
CREATE INDEX sso_connections_organization ON sso_connections (environment_id, organization_id, id);

-- A sign-in the service started (SP-initiated): single use, bound to the browser that started it. key_hash
-- is SHA-256 of the SAML AuthnRequest ID or of the OpenID Connect state.
CREATE TABLE sso_requests (
  environment_id uuid NOT NULL,
  key_hash bytea NOT NULL,
  connection_id uuid NOT NULL,
  browser_hash bytea NOT NULL,
  redirect_url text NOT NULL,
  secrets_sealed bytea,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, key_hash),
  FOREIGN KEY (environment_id, connection_id) REFERENCES sso_connections (environment_id, id) ON DELETE CASCADE
);
CREATE INDEX sso_requests_expires_at ON sso_requests (expires_at);

-- SAML assertions already accepted: an assertion ID signs in once, in every process, until it expires.
CREATE TABLE sso_used_assertions (
  environment_id uuid NOT NULL,
  connection_id uuid NOT NULL,
  assertion_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, connection_id, assertion_id)
);
CREATE INDEX sso_used_assertions_expires_at ON sso_used_assertions (expires_at);

-- Who a connection's subject (SAML NameID, OpenID `sub`) is in Gatehouse.
CREATE TABLE sso_identities (
  environment_id uuid NOT NULL,
  connection_id uuid NOT NULL,
  subject text NOT NULL,
  user_id uuid NOT NULL,
  created_at timestamptz NOT NULL,
  last_sign_in_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, connection_id, subject),
  FOREIGN KEY (environment_id, connection_id) REFERENCES sso_connections (environment_id, id) ON DELETE CASCADE,
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
CREATE INDEX sso_identities_user ON sso_identities (environment_id, user_id);

-- The changes of a connection, and of a SCIM directory (0031), are webhook events (see 0028), named like their audit actions.
INSERT INTO webhook_event_sources (action, type) VALUES
  ('sso_connection.created', 'sso_connection.created'),
  ('sso_connection.updated', 'sso_connection.updated'),
  ('sso_connection.deleted', 'sso_connection.deleted'),
  ('scim_directory.created', 'scim_directory.created'),
  ('scim_directory.updated', 'scim_directory.updated'),
  ('scim_directory.token_rotated', 'scim_directory.token_rotated'),
  ('scim_directory.deleted', 'scim_directory.deleted');
