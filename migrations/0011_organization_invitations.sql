-- Invitations to join an organization with a role. As environment invitations: the token is stored hashed,
-- a PENDING row past expires_at reads as EXPIRED, and an email has at most one pending invitation per
-- organization (a re-invite replaces it).
CREATE TABLE organization_invitations (
  environment_id uuid NOT NULL,
  id uuid NOT NULL,
  organization_id uuid NOT NULL,
  email text NOT NULL,
  role text NOT NULL,
  status text NOT NULL CHECK (status IN ('PENDING', 'ACCEPTED', 'REVOKED', 'EXPIRED')),
  token_hash bytea NOT NULL,
  inviter_user_id uuid,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  accepted_at timestamptz,
  accepted_user_id uuid,
  revoked_at timestamptz,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, organization_id) REFERENCES organizations (environment_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX organization_invitations_token_hash_key ON organization_invitations (environment_id, token_hash);
CREATE UNIQUE INDEX organization_invitations_pending_email_key ON organization_invitations (environment_id, organization_id, email) WHERE status = 'PENDING';
CREATE INDEX organization_invitations_by_organization ON organization_invitations (environment_id, organization_id, id);
