-- A session's active organization (issue 27): its JWTs carry org_id, org_role and org_slug. The key points
-- at the session user's MEMBERSHIP, so the database keeps it honest: it can only be set to an organization
-- the user belongs to, and when the membership ends (removed, left, the organization deleted, which
-- cascades to its memberships) the column is cleared in the same statement. SET NULL names the one column:
-- environment_id and user_id stay (PostgreSQL 15+).
ALTER TABLE sessions ADD COLUMN active_organization_id uuid;
-- NOT VALID skips the scan of existing rows, which are all NULL and so satisfy it; new rows are checked.
-- rolling-upgrade: the previous version never writes active_organization_id (added above), so its rows keep NULL,
-- which the key does not check, and without the scan the lock it takes is brief.
ALTER TABLE sessions ADD CONSTRAINT sessions_active_membership
  FOREIGN KEY (environment_id, active_organization_id, user_id)
  REFERENCES organization_memberships (environment_id, organization_id, user_id)
  ON DELETE SET NULL (active_organization_id) NOT VALID;
-- What a membership's deletion looks up to clear; only sessions with an active organization are in it.
CREATE INDEX sessions_active_organization ON sessions (environment_id, active_organization_id, user_id)
  WHERE active_organization_id IS NOT NULL;
