CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE users (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  email text,
  email_verified_at timestamptz,
  password_hash text,
  name text,
  first_name text,
  last_name text,
  locale text CHECK (locale IN ('en', 'da')),
  status text NOT NULL CHECK (status IN ('active', 'banned', 'deleted')),
  registration_state text NOT NULL CHECK (registration_state IN ('pending_email_verification', 'complete')),
  public_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  private_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  unsafe_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  failed_sign_ins integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz,
  PRIMARY KEY (environment_id, id)
);
-- Emails are stored lower-cased; a deleted user frees its email for a new account.
CREATE UNIQUE INDEX users_email_key ON users (environment_id, email) WHERE status <> 'deleted';
CREATE INDEX users_email_trgm ON users USING gin (email gin_trgm_ops);
CREATE INDEX users_public_metadata ON users USING gin (public_metadata jsonb_path_ops);
CREATE INDEX users_private_metadata ON users USING gin (private_metadata jsonb_path_ops);
