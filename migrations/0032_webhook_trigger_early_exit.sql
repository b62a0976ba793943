-- Every own-trail event (each user created, each sign-in, each audited change) runs the webhook outbox
-- trigger of 0028. For an environment without an enabled endpoint it opened a loop over the event's
-- sources and probed the endpoints once per source, only to write nothing: about 0.1 ms of PostgreSQL
-- CPU per event, a sixth of a user creation's (bench/results/users.md, 2026-11-27). It now asks first
-- whether the environment has an enabled endpoint at all; what it writes when there is one is unchanged.
-- rolling-upgrade: the function writes exactly what it wrote before for every event (it only returns early where
-- the loop found no endpoint), so the previous version's changes get the same webhook rows as this version's.
CREATE OR REPLACE FUNCTION webhook_events_from_own_trail() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  source record;
  event_id uuid;
BEGIN
  IF NEW.producer->>'type' <> 'gatehouse' THEN RETURN NULL; END IF;
  -- Most environments have no enabled endpoint: one index probe answers that, before the loop over the
  -- event's sources (a cursor, and a probe per source) that would find nothing to write.
  IF NOT EXISTS (SELECT FROM webhook_endpoints e WHERE e.environment_id = NEW.environment_id AND e.enabled) THEN RETURN NULL; END IF;
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
