-- Mail leaves through the outbox. Every mail is written here first (in the transaction of the change
-- that causes it where there is one), and with SMTP configured a worker in every process claims due
-- messages and sends them, so no request waits for an SMTP server. Statuses:
--   caught   no SMTP: kept for reading (the development mail catcher), never sent
--   pending  waiting for its next attempt at next_attempt_at; while a worker sends it, next_attempt_at is
--            the end of that worker's lease, after which another worker may try it (at-least-once)
--   sent     delivered; subject and bodies are cleared (they hold codes and links in clear)
--   failed   given up after the last attempt or a permanent refusal; cleared the same way
-- Rows that are there already were caught by the mail catcher.
ALTER TABLE outbox_messages
  ADD COLUMN status text NOT NULL DEFAULT 'caught' CHECK (status IN ('caught', 'pending', 'sent', 'failed')),
  ADD COLUMN attempts integer NOT NULL DEFAULT 0,
  ADD COLUMN next_attempt_at timestamptz,
  ADD COLUMN last_error text,
  ADD COLUMN finished_at timestamptz;
-- rolling-upgrade: offline: the version before inserts outbox rows without a status, which fails from here on
-- (its requests that send mail answer 500), so its processes must be stopped before this migration runs.
ALTER TABLE outbox_messages ALTER COLUMN status DROP DEFAULT;
-- Claims take the due messages in order; the index holds only what is still to send.
CREATE INDEX outbox_messages_due ON outbox_messages (next_attempt_at) WHERE status = 'pending';
-- The retention sweep: caught mail after an hour, everything else after GATEHOUSE_RETENTION_OUTBOX_DAYS.
CREATE INDEX outbox_messages_age ON outbox_messages (status, created_at);

-- Retention sweeps delete by age across environments, in batches: each needs an index on its cut-off
-- column, or every batch would read the whole table.
-- Ended sessions: past their absolute expiry, or revoked. (Not last_active_at: an index on it would end
-- the HOT updates that make touching a session cheap.)
CREATE INDEX sessions_expires_at ON sessions (expires_at);
CREATE INDEX sessions_revoked_at ON sessions (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX rate_limit_windows_window_start ON rate_limit_windows (window_start);
CREATE INDEX verification_codes_expires_at ON verification_codes (expires_at);
-- Pending invitations past their expiry are marked EXPIRED by the sweep.
CREATE INDEX invitations_pending_expiry ON invitations (expires_at) WHERE status = 'PENDING';

-- Audit retention (the environment setting auditRetentionDays). The log stays append-only for every
-- statement but one: a DELETE inside a transaction that named the environment and the cut-off with
-- set_config('gatehouse.audit_retention_environment' / 'gatehouse.audit_retention_before', ..., true),
-- and only of that environment's events both recorded and occurred before the cut-off. UPDATE and
-- TRUNCATE stay refused, as does any other DELETE.
CREATE FUNCTION audit_events_refuse_change_but_retention() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  retained_environment uuid := nullif(current_setting('gatehouse.audit_retention_environment', true), '')::uuid;
  retained_before timestamptz := nullif(current_setting('gatehouse.audit_retention_before', true), '')::timestamptz;
BEGIN
  IF TG_OP = 'DELETE' AND OLD.environment_id = retained_environment
     AND OLD.recorded_at < retained_before AND OLD.occurred_at < retained_before THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit events are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
-- rolling-upgrade: it is created again just below, in this migration's one transaction, so no statement ever
-- runs without it.
DROP TRIGGER audit_events_append_only ON audit_events;
-- rolling-upgrade: the trigger the previous version's writes met before, with a function that refuses all the old
-- one did except a DELETE in a transaction that names a retention cut-off, which only this version's sweep does.
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change_but_retention();
