-- A user's email addresses (issue 25): one or more, exactly one primary. users.email and
-- users.email_verified_at stay as the primary's copy, kept in the same transaction as every change of
-- the primary, so the hot paths that read them (sign-in by the primary, GET user, the users list search)
-- are unchanged.
--
-- No foreign key to users: adding one locks users against writes (SHARE ROW EXCLUSIVE) until this
-- migration commits, and sign-ins write users. Users are never hard-deleted, so nothing dangles.
CREATE TABLE email_addresses (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  -- Lower-cased, as users.email.
  email text NOT NULL,
  is_primary boolean NOT NULL,
  verified_at timestamptz,
  -- Set when the user is soft-deleted: a deleted user's addresses no longer hold the email (as
  -- users_email_key frees a deleted user's email).
  released_at timestamptz,
  -- The latest 6-digit code mailed to prove the address, hashed; one live code per address.
  code_hash bytea,
  code_expires_at timestamptz,
  code_attempts integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id)
);

-- Every user with an email gets it as its primary address, verified as the user's email was. Its id is
-- the user's own: unique already, and no new address (uuidv7, made by the service) can take it.
-- The users table is only read (ACCESS SHARE): sign-ins and changes go on while this runs. A user that
-- has a primary already is skipped, so the statement can run again after a rolling deploy, for users a
-- process of the version before created meanwhile (the service also puts each right when it is next used).
-- rolling-upgrade: the version before keeps writing users.email, which sign-in by the primary reads; a user it
-- creates or changes meanwhile is put right when its addresses are next read (list in
-- src/email-addresses/service.ts), and this statement skips users that have a primary, so it may run again.
INSERT INTO email_addresses (environment_id, id, user_id, email, is_primary, verified_at, released_at, created_at)
SELECT u.environment_id, u.id, u.id, u.email, true, u.email_verified_at,
  CASE WHEN u.status = 'deleted' THEN coalesce(u.deleted_at, u.updated_at) END, u.created_at
FROM users u
WHERE u.email IS NOT NULL
  AND NOT EXISTS (SELECT FROM email_addresses a WHERE a.environment_id = u.environment_id AND a.user_id = u.id AND a.is_primary);

-- The indexes are built after the rows are in: one sort each instead of a million insertions.

-- A user's addresses, listed in one index range; an address appears once per user.
CREATE UNIQUE INDEX email_addresses_user_email_key ON email_addresses (environment_id, user_id, email);
-- Exactly one primary per user (at least one is kept by the service: the primary cannot be deleted).
CREATE UNIQUE INDEX email_addresses_primary_key ON email_addresses (environment_id, user_id) WHERE is_primary;
-- An address a live user has verified, or has as primary (the copy in users.email, which signs in,
-- verified or not), belongs to that user alone. An unverified secondary claims nothing, so adding one
-- never tells whether another account has it. Sign-in by a verified secondary reads this index.
CREATE UNIQUE INDEX email_addresses_claimed_key ON email_addresses (environment_id, email)
  WHERE (verified_at IS NOT NULL OR is_primary) AND released_at IS NULL;
