-- Second factors (issue 26): TOTP factors, single-use backup codes, and the challenge a sign-in answers
-- when the user has a factor. Every key leads with the environment.

CREATE TABLE mfa_factors (
  environment_id uuid NOT NULL,
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  type text NOT NULL CHECK (type IN ('totp')),
  name text NOT NULL,
  -- The TOTP secret, sealed under GATEHOUSE_ENCRYPTION_KEY (AES-256-GCM), as the signing keys are.
  secret_sealed bytea NOT NULL,
  created_at timestamptz NOT NULL,
  confirmed_at timestamptz,
  last_used_at timestamptz,
  -- The last TOTP time step accepted (enrolment or sign-in): a code is good once, never replayed.
  last_used_step bigint,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
CREATE INDEX mfa_factors_by_user ON mfa_factors (environment_id, user_id);
-- One confirmed TOTP factor per user, as Clerk and Auth0 have it: a second authenticator app adds nothing.
CREATE UNIQUE INDEX mfa_factors_one_totp ON mfa_factors (environment_id, user_id) WHERE type = 'totp' AND confirmed_at IS NOT NULL;

CREATE TABLE mfa_backup_codes (
  environment_id uuid NOT NULL,
  user_id uuid NOT NULL,
  code_hash bytea NOT NULL,
  created_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (environment_id, user_id, code_hash),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);

CREATE TABLE mfa_challenges (
  environment_id uuid NOT NULL,
  token_hash bytea NOT NULL,
  user_id uuid NOT NULL,
  -- How the first step was passed (password, oauth, password_reset) and what the trail records with it.
  method text NOT NULL,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (environment_id, token_hash),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
CREATE INDEX mfa_challenges_expiry ON mfa_challenges (expires_at);

-- How the session's user proved who they are (RFC 8176 values: pwd, otp, fed, hwk, swk, mfa, email), and
-- whether it may only enrol a second factor (policy "required", no factor yet). Constant defaults: no rewrite.
ALTER TABLE sessions
  ADD COLUMN amr text[] NOT NULL DEFAULT '{}',
  ADD COLUMN enrolment_only boolean NOT NULL DEFAULT false;
