CREATE TABLE sessions (
  environment_id uuid NOT NULL,
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  token_hash bytea NOT NULL,
  actor jsonb,
  ip_address text,
  user_agent text,
  created_at timestamptz NOT NULL,
  last_active_at timestamptz NOT NULL,
  idle_timeout_seconds integer NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
CREATE UNIQUE INDEX sessions_token_hash_key ON sessions (environment_id, token_hash);
CREATE INDEX sessions_active_by_user ON sessions (environment_id, user_id, id) WHERE revoked_at IS NULL;

-- One live code per user and purpose: a new request replaces the previous code.
CREATE TABLE verification_codes (
  environment_id uuid NOT NULL,
  user_id uuid NOT NULL,
  purpose text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
  code_hash bytea NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (environment_id, user_id, purpose),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
