-- The ES256 keys that sign each environment's session JWTs. The private key is stored sealed (AES-256-GCM
-- under GATEHOUSE_ENCRYPTION_KEY), the public key as a JWK. One key signs at a time; a key rotated out
-- stays published until every token it signed has expired (published_until); a revoked key leaves at once.
CREATE TABLE signing_keys (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  public_jwk jsonb NOT NULL,
  private_key_sealed bytea NOT NULL,
  created_at timestamptz NOT NULL,
  retired_at timestamptz,
  published_until timestamptz,
  revoked_at timestamptz,
  PRIMARY KEY (environment_id, id)
);
-- At most one signing key per environment, so two processes creating the first one at once make one.
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (environment_id) WHERE retired_at IS NULL AND revoked_at IS NULL;
