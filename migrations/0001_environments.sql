CREATE TABLE environments (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  frontend_host text NOT NULL,
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  allowed_origins text[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
-- The client plane finds an environment by the request's Host header.
CREATE UNIQUE INDEX environments_frontend_host_key ON environments (lower(frontend_host));

CREATE TABLE secret_keys (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  key_hash bytea NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz,
  PRIMARY KEY (environment_id, id)
);
-- A presented key is looked up by its hash alone: the key is what names the environment.
CREATE UNIQUE INDEX secret_keys_key_hash_key ON secret_keys (key_hash);
CREATE UNIQUE INDEX secret_keys_id_key ON secret_keys (id);
