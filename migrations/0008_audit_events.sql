-- Customer audit events and Gatehouse's own trail. (0007 is reserved for invitations.)

-- One counter per environment. Every event takes its sequence from here with an UPDATE (upsert) in the
-- transaction that inserts the event, so the counter row stays locked until that transaction ends: the
-- next event of the environment waits, gets the next number and can only commit after it. Events
-- therefore become visible in sequence order, and a poller that has read every event up to sequence N
-- never later sees a smaller one appear (a global bigserial would hand out numbers whose transactions
-- commit out of order, leaving gaps filled by late commits). A rolled-back event rolls back its number.
CREATE TABLE audit_sequences (
  environment_id uuid PRIMARY KEY REFERENCES environments (id),
  last_sequence bigint NOT NULL
);
-- Every event updates its environment's counter: leave room for HOT updates.
ALTER TABLE audit_sequences SET (fillfactor = 50);

-- No foreign key to environments here: the counter row above already proves the environment, and a
-- key check on every insert would lock the environment row (FOR KEY SHARE) thousands of times a second.
CREATE TABLE audit_events (
  environment_id uuid NOT NULL,
  id uuid NOT NULL,
  sequence bigint NOT NULL,
  action text NOT NULL,
  result text NOT NULL,
  occurred_at timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL,
  actor_type text NOT NULL,
  actor_id uuid,
  actor_impersonator_id uuid,
  targets jsonb NOT NULL,
  ip_address text,
  user_agent text,
  producer jsonb NOT NULL,
  metadata jsonb NOT NULL,
  schema_version integer NOT NULL,
  correlation_id uuid,
  PRIMARY KEY (environment_id, id)
);
-- Polling (sequence > N in sequence order) and the uniqueness of each number.
CREATE UNIQUE INDEX audit_events_sequence_key ON audit_events (environment_id, sequence);
-- Search filters, each ending in id so a filtered page is read in keyset order.
CREATE INDEX audit_events_action ON audit_events (environment_id, action, id);
CREATE INDEX audit_events_actor ON audit_events (environment_id, actor_id, id) WHERE actor_id IS NOT NULL;
CREATE INDEX audit_events_correlation ON audit_events (environment_id, correlation_id, id) WHERE correlation_id IS NOT NULL;
CREATE INDEX audit_events_occurred_at ON audit_events (environment_id, occurred_at);
-- Target filters are JSON containment: targets @> '[{"type": "user", "id": "..."}]'.
CREATE INDEX audit_events_targets ON audit_events USING gin (targets jsonb_path_ops);

-- The log is append-only: no statement may change or remove an event.
CREATE FUNCTION audit_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit events are append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_refuse_change();

-- Idempotency keys of appends, written in the same statement as the event they name. The unique key
-- makes a concurrent duplicate wait for the first append's commit and then find its row. Pruned by the
-- maintenance sweep once older than 24 hours.
CREATE TABLE audit_idempotency_keys (
  environment_id uuid NOT NULL,
  idempotency_key text NOT NULL,
  request_hash bytea NOT NULL,
  event_id uuid NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, idempotency_key)
);
CREATE INDEX audit_idempotency_keys_created_at ON audit_idempotency_keys (created_at);
