-- External sign-in. Each environment configures its providers (OpenID Connect, a generic OAuth2 server,
-- or a preset: Google, Microsoft, GitHub); `id` is the environment's own slug for it ("google",
-- "corp-sso"), the path segment of its client-plane routes. The client secret is sealed (AES-256-GCM under
-- GATEHOUSE_ENCRYPTION_KEY) like the signing keys.
CREATE TABLE oauth_providers (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id text NOT NULL,
  type text NOT NULL CHECK (type IN ('oidc', 'oauth2', 'google', 'github', 'microsoft')),
  name text NOT NULL,
  client_id text NOT NULL,
  client_secret_sealed bytea NOT NULL,
  issuer text,
  authorization_url text,
  token_url text,
  user_info_url text,
  scopes text[] NOT NULL,
  enabled boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id)
);

-- One row per authorization started: the state (its SHA-256), the browser it is bound to (the SHA-256
-- of the value of an HttpOnly cookie), and what the callback needs: the PKCE verifier and the OIDC nonce
-- (sealed), and where to send the user. A callback uses it up with one conditional UPDATE.
CREATE TABLE oauth_states (
  environment_id uuid NOT NULL REFERENCES environments (id),
  state_hash bytea NOT NULL,
  provider_id text NOT NULL,
  browser_hash bytea NOT NULL,
  secrets_sealed bytea NOT NULL,
  redirect_url text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (environment_id, state_hash)
);
CREATE INDEX oauth_states_expires_at ON oauth_states (expires_at);

-- A user's account at a provider: (provider, subject) names it for good, so it belongs to one user.
CREATE TABLE user_identities (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  provider_id text NOT NULL,
  subject text NOT NULL,
  email text,
  email_verified boolean NOT NULL,
  created_at timestamptz NOT NULL,
  last_sign_in_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
CREATE UNIQUE INDEX user_identities_subject_key ON user_identities (environment_id, provider_id, subject);
CREATE INDEX user_identities_by_user ON user_identities (environment_id, user_id, id);
