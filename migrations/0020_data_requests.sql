-- Data requests (GDPR Art. 15, 17 and 20) and the durable job queue that runs them.

-- One generic queue for background work that must survive restarts and run once across processes.
-- A worker claims due rows (FOR UPDATE SKIP LOCKED) for a lease: attempts + 1, locked_until = the
-- lease's end, committed at once. It then runs the handler in ONE transaction that also sets
-- finished_at, so the effect and the completion commit together: a process killed mid-job rolls both
-- back, and the job is claimed again when its lease ends. A failed attempt goes back to queued at a
-- later run_at (backoff); the last one ends as failed. Statuses: queued, done, failed.
CREATE TABLE jobs (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  kind text NOT NULL,
  payload jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'done', 'failed')),
  run_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL,
  locked_until timestamptz,
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  last_error text,
  PRIMARY KEY (environment_id, id)
);
-- Claims read the due jobs in order across environments; the index holds only what is still to run.
CREATE INDEX jobs_due ON jobs (run_at) WHERE status = 'queued';
-- Housekeeping deletes finished jobs by age.
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;

-- A user's export or erasure request. Statuses:
--   pending    an export waiting for its job
--   ready      an export whose archive can be downloaded until expires_at (reads as completed after it)
--   scheduled  an erasure waiting out its grace period until completes_at; it can be cancelled meanwhile
--   completed  an erasure done, or an export whose download window closed (archive deleted)
--   cancelled  an erasure cancelled during its grace period
CREATE TABLE data_requests (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  user_id uuid NOT NULL,
  type text NOT NULL CHECK (type IN ('export', 'erasure')),
  status text NOT NULL CHECK (status IN ('pending', 'ready', 'scheduled', 'completed', 'cancelled')),
  requested_by jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  completes_at timestamptz,
  ready_at timestamptz,
  expires_at timestamptz,
  completed_at timestamptz,
  cancelled_at timestamptz,
  cancel_reason text,
  archive jsonb,
  job_id uuid NOT NULL,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, user_id) REFERENCES users (environment_id, id)
);
-- A user's requests, newest first; and at most one request of each type in flight per user, so a
-- double click cannot schedule two erasures (the insert's conflict is the 409).
CREATE INDEX data_requests_by_user ON data_requests (environment_id, user_id, id);
CREATE UNIQUE INDEX data_requests_in_flight_key ON data_requests (environment_id, user_id, type) WHERE status IN ('pending', 'scheduled');
CREATE INDEX data_requests_by_status ON data_requests (environment_id, status, id);
-- Housekeeping deletes the archives whose link expired.
CREATE INDEX data_requests_archive_expiry ON data_requests (expires_at) WHERE archive IS NOT NULL;

-- An export gathers, and an erasure deletes, every session of a user (revoked and expired ones hold IPs
-- and user agents too, for the session retention); sessions_active_by_user covers only live ones.
CREATE INDEX sessions_by_user ON sessions (environment_id, user_id, id);
-- Invitations to the user's address or accepted by the user: an export lists them with one OR, which
-- the planner can answer from two indexes (a BitmapOr) only when both sides have one; else it reads the table.
CREATE INDEX organization_invitations_email ON organization_invitations (environment_id, email);
CREATE INDEX invitations_email ON invitations (environment_id, email);
CREATE INDEX organization_invitations_accepted_user ON organization_invitations (environment_id, accepted_user_id) WHERE accepted_user_id IS NOT NULL;
CREATE INDEX invitations_accepted_user ON invitations (environment_id, accepted_user_id) WHERE accepted_user_id IS NOT NULL;

-- Erasure removes the IP address and user agent from the service's own trail events that name the user
-- (as actor or target). The log stays append-only for every other statement: an UPDATE passes only inside
-- a transaction that named the environment and user with set_config('gatehouse.audit_erasure_environment'
-- / 'gatehouse.audit_erasure_user', ..., true), only for an own-trail event (producer type gatehouse)
-- naming that user, and only when it changes nothing but nulling those two columns. The customer's events
-- (appended with a secret key) are never changed. Retention deletes pass as before.
-- rolling-upgrade: the new branch lets an UPDATE through only in a transaction that names an erased user
-- (gatehouse.audit_erasure_*), which only this version's erasure does; the previous version's statements meet
-- the same refusals as before.
CREATE OR REPLACE FUNCTION audit_events_refuse_change_but_retention() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  retained_environment uuid := nullif(current_setting('gatehouse.audit_retention_environment', true), '')::uuid;
  retained_before timestamptz := nullif(current_setting('gatehouse.audit_retention_before', true), '')::timestamptz;
  erased_environment uuid := nullif(current_setting('gatehouse.audit_erasure_environment', true), '')::uuid;
  erased_user uuid := nullif(current_setting('gatehouse.audit_erasure_user', true), '')::uuid;
BEGIN
  IF TG_OP = 'DELETE' AND OLD.environment_id = retained_environment
     AND OLD.recorded_at < retained_before AND OLD.occurred_at < retained_before THEN
    RETURN OLD;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.environment_id = erased_environment AND OLD.producer ->> 'type' = 'gatehouse'
     AND (OLD.actor_id = erased_user OR OLD.targets @> jsonb_build_array(jsonb_build_object('type', 'user', 'id', erased_user::text)))
     AND NEW.ip_address IS NULL AND NEW.user_agent IS NULL
     AND (to_jsonb(NEW) - 'ip_address' - 'user_agent') = (to_jsonb(OLD) - 'ip_address' - 'user_agent') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit events are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
