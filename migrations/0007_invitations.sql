-- Environment invitations. `status` is what was last stored: a PENDING row past expires_at reads as
-- EXPIRED everywhere at once, and the maintenance sweep stores that later.
CREATE TABLE invitations (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  email text NOT NULL,
  status text NOT NULL CHECK (status IN ('PENDING', 'ACCEPTED', 'REVOKED', 'EXPIRED')),
  token_hash bytea NOT NULL,
  redirect_url text,
  public_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  private_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz,
  accepted_user_id uuid,
  PRIMARY KEY (environment_id, id)
) WITH (fillfactor = 90);
CREATE UNIQUE INDEX invitations_token_hash_key ON invitations (environment_id, token_hash);
-- At most one pending invitation per email: a re-invite replaces it.
CREATE UNIQUE INDEX invitations_pending_email_key ON invitations (environment_id, email) WHERE status = 'PENDING';
CREATE INDEX invitations_status ON invitations (environment_id, status, id);
CREATE INDEX invitations_email_trgm ON invitations USING gin (email gin_trgm_ops);
CREATE INDEX invitations_public_metadata ON invitations USING gin (public_metadata jsonb_path_ops);
CREATE INDEX invitations_private_metadata ON invitations USING gin (private_metadata jsonb_path_ops);
