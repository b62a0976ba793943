-- Webhooks (Standard Webhooks): endpoints, the events they receive, and one delivery per endpoint and
-- event, sent by the job queue (0020) as jobs of kind 'webhook.deliver'.

-- A customer's receiver. The signing secret is sealed (GATEHOUSE_ENCRYPTION_KEY), never hashed: HMAC
-- needs it. After a rotation the previous secret also signs until previous_secret_expires_at.
-- event_types NULL means every type. disabled_reason says why an endpoint is off: 'manual' (the
-- customer) or 'failing' (every delivery failed for failing_since..now, see src/webhooks/delivery.ts).
CREATE TABLE webhook_endpoints (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  url text NOT NULL,
  description text,
  event_types text[],
  enabled boolean NOT NULL,
  disabled_reason text CHECK (disabled_reason IN ('manual', 'failing')),
  secret_sealed bytea NOT NULL,
  previous_secret_sealed bytea,
  previous_secret_expires_at timestamptz,
  failing_since timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id)
);

-- What happened, written in the transaction of the change itself (see the trigger below), so an event
-- exists if and only if its change committed. `data` is the event's payload body's `data`.
CREATE TABLE webhook_events (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id)
);

-- One event for one endpoint. Statuses: pending (attempts to come), succeeded, failed (given up, or
-- refused: a target the SSRF rule forbids is a failed attempt with its reason in last_error).
CREATE TABLE webhook_deliveries (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  endpoint_id uuid NOT NULL,
  event_id uuid NOT NULL,
  job_id uuid NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_response_status integer,
  last_error text,
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  PRIMARY KEY (environment_id, id)
);
-- An endpoint's deliveries, newest first.
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (environment_id, endpoint_id, id DESC);

-- Every attempt of a delivery, with what the receiver answered (the first KB of its body).
CREATE TABLE webhook_attempts (
  environment_id uuid NOT NULL,
  delivery_id uuid NOT NULL,
  attempt integer NOT NULL,
  started_at timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  response_status integer,
  response_body text,
  error text,
  PRIMARY KEY (environment_id, delivery_id, attempt)
);

-- Jobs that share an ordering key (a webhook endpoint's id) are claimed in the order they were queued
-- (seq), and not while one of them is in flight: "in order per endpoint where possible". The index
-- holds the in-flight keyed jobs, which every claim reads.
ALTER TABLE jobs ADD COLUMN ordering_key text;
-- rolling-upgrade: the previous version's inserts name no seq, which the identity fills. The column rewrites jobs
-- under an exclusive lock, but jobs holds only queued jobs and those finished in the last week, so claims and
-- new jobs wait only moments.
ALTER TABLE jobs ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX jobs_in_flight ON jobs (locked_until) INCLUDE (ordering_key) WHERE status = 'queued' AND ordering_key IS NOT NULL;

-- Which of the service's own audit-trail actions make which webhook event types. The catalogue in
-- src/webhooks/catalogue.ts documents each type; a test keeps the two the same. `method`, when set,
-- limits a source to audit events whose metadata names that method (a sign-up from an invitation is
-- recorded as its first sign-in only); one audit event's types are written in `position` order.
CREATE TABLE webhook_event_sources (
  action text NOT NULL,
  type text NOT NULL,
  method text NOT NULL DEFAULT '',
  position smallint NOT NULL DEFAULT 1,
  PRIMARY KEY (action, type, method)
);
INSERT INTO webhook_event_sources (action, type) VALUES
  ('user.created', 'user.created'),
  ('user.signed_up', 'user.created'),
  ('user.updated', 'user.updated'),
  ('user.metadata_updated', 'user.updated'),
  ('user.primary_email_changed', 'user.updated'),
  ('user.deleted', 'user.deleted'),
  ('user.banned', 'user.banned'),
  ('user.unbanned', 'user.unbanned'),
  ('user.email_verified', 'email.verified'),
  ('user.email_address_verified', 'email.verified'),
  ('user.signed_in', 'session.created'),
  ('impersonation.redeemed', 'impersonation.redeemed'),
  ('session.revoked', 'session.revoked'),
  ('user.sessions_revoked', 'session.revoked'),
  ('organization.created', 'organization.created'),
  ('organization.updated', 'organization.updated'),
  ('organization.metadata_updated', 'organization.updated'),
  ('organization.deleted', 'organization.deleted'),
  ('organization_membership.created', 'organization_membership.created'),
  ('organization_membership.updated', 'organization_membership.updated'),
  ('organization_membership.metadata_updated', 'organization_membership.updated'),
  ('organization_membership.deleted', 'organization_membership.deleted'),
  ('invitation.created', 'invitation.created'),
  ('invitation.accepted', 'invitation.accepted'),
  ('invitation.revoked', 'invitation.revoked'),
  ('organization_invitation.created', 'organization_invitation.created'),
  ('organization_invitation.accepted', 'organization_invitation.accepted'),
  ('organization_invitation.revoked', 'organization_invitation.revoked'),
  ('user.mfa_factor_added', 'factor.added'),
  ('user.passkey_added', 'factor.added'),
  ('user.mfa_factor_removed', 'factor.removed'),
  ('user.passkey_removed', 'factor.removed'),
  ('user.mfa_reset', 'factor.removed');
INSERT INTO webhook_event_sources (action, type, method, position) VALUES
  ('user.signed_in', 'user.created', 'invitation', 0),
  ('user.signed_in', 'user.created', 'organization_invitation', 0);

-- The outbox: every own-trail event the table above names becomes a webhook event, and a delivery and
-- its job for each enabled endpoint that wants the type, in the transaction that records the change.
-- Nothing is written for an environment without such an endpoint. Times are the event's own (the
-- service's clock), never the database's. A uuidv7-like id keeps events and deliveries in time order.
CREATE FUNCTION webhook_uuid(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$
  SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
    PLACING substring(int8send(floor(extract(epoch FROM at) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$;

CREATE FUNCTION webhook_events_from_own_trail() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  source record;
  event_id uuid;
BEGIN
  IF NEW.producer->>'type' <> 'gatehouse' THEN RETURN NULL; END IF;
  FOR source IN SELECT s.type FROM webhook_event_sources s
                WHERE s.action = NEW.action AND (s.method = '' OR s.method = NEW.metadata->>'method') ORDER BY s.position LOOP
    IF NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.environment_id = NEW.environment_id AND e.enabled
                   AND (e.event_types IS NULL OR source.type = ANY (e.event_types))) THEN
      CONTINUE;
    END IF;
    event_id := webhook_uuid(NEW.occurred_at);
    INSERT INTO webhook_events (environment_id, id, type, data, occurred_at) VALUES (
      NEW.environment_id, event_id, source.type,
      jsonb_build_object(
        'object', NEW.targets->0->>'type', 'id', NEW.targets->0->>'id', 'targets', NEW.targets,
        'actor', jsonb_build_object('type', NEW.actor_type, 'id', NEW.actor_id, 'impersonatorId', NEW.actor_impersonator_id),
        'metadata', NEW.metadata, 'auditEventId', NEW.id),
      NEW.occurred_at);
    WITH due AS (
      SELECT e.id AS endpoint_id, webhook_uuid(NEW.occurred_at) AS delivery_id, webhook_uuid(NEW.occurred_at) AS job_id
      FROM webhook_endpoints e
      WHERE e.environment_id = NEW.environment_id AND e.enabled AND (e.event_types IS NULL OR source.type = ANY (e.event_types))
      ORDER BY e.id
    ), deliveries AS (
      INSERT INTO webhook_deliveries (environment_id, id, endpoint_id, event_id, job_id, status, next_attempt_at, created_at)
      SELECT NEW.environment_id, delivery_id, endpoint_id, event_id, job_id, 'pending', NEW.occurred_at, NEW.occurred_at FROM due
    )
    INSERT INTO jobs (environment_id, id, kind, payload, status, run_at, max_attempts, created_at, ordering_key)
    SELECT NEW.environment_id, job_id, 'webhook.deliver', jsonb_build_object('deliveryId', delivery_id), 'queued',
           NEW.occurred_at, 20, NEW.occurred_at, endpoint_id::text
    FROM due;
    PERFORM pg_notify('gatehouse_invalidate', 'jobs:queued');
  END LOOP;
  RETURN NULL;
END $$;

-- rolling-upgrade: it writes only for environments with an enabled endpoint, which only this version's API
-- creates, and then for the previous version's changes too, as it should. A worker of the previous version that
-- claims a webhook.deliver job has no handler for it and puts it back for a retry (one of its 20 attempts): a
-- delivery may be late, never lost.
CREATE TRIGGER webhook_events_from_own_trail AFTER INSERT ON audit_events
  FOR EACH ROW EXECUTE FUNCTION webhook_events_from_own_trail();
