-- Operators of the dashboard (issue 30) are the users of one reserved environment, so their password policy,
-- lockout, second factors and sessions are the end-users' very code. `reserved` names what such an environment
-- is for ('operators'); customer environments have NULL. At most one environment per purpose.
ALTER TABLE environments ADD COLUMN reserved text;
-- rolling-upgrade: the previous version never writes reserved (added above), so none of its rows is in this
-- partial index; environments is a small table, so the build holds its writes only briefly.
CREATE UNIQUE INDEX environments_reserved ON environments (reserved) WHERE reserved IS NOT NULL;

-- One-time links to set an operator's first password (`operators create` without --password). Only the
-- token's hash is kept; a token works once, before it expires.
CREATE TABLE operator_password_tokens (
  environment_id uuid NOT NULL,
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
