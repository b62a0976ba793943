-- Mail is delivered by the job queue (0020): with SMTP configured, each pending outbox message has a job
-- of kind 'mail.deliver' (payload {messageId}), queued with it, that sends it and retries it. The outbox
-- row stays the record of the message (what the admin API shows; a backlog gauge counts the pending
-- ones): attempts is the job's attempt that last began; next_attempt_at is when the next attempt is due,
-- NULL while one is under way; last_error, finished_at and the cleared bodies as before (0015).
--
-- Mail still pending from before this version gets its job here, due when the message was, its attempts
-- carried over; one still in an old worker's hands (next_attempt_at is that worker's lease end) is due
-- again when that lease ends. Nothing is lost across the upgrade.
-- rolling-upgrade: offline: with SMTP, processes of the version before send pending mail from the outbox
-- themselves (by next_attempt_at), so beside this version a message could go out twice, and mail they queue
-- after this statement has no job and is never sent once they stop. Stop them before this migration runs.
INSERT INTO jobs (environment_id, id, kind, payload, status, run_at, attempts, max_attempts, created_at)
SELECT environment_id, gen_random_uuid(), 'mail.deliver', jsonb_build_object('messageId', id), 'queued',
       coalesce(next_attempt_at, created_at), attempts, greatest(20, attempts + 1), created_at
FROM outbox_messages
WHERE status = 'pending';

-- Claims read the job queue now, never the outbox by due time.
-- rolling-upgrade: only the version before claims outbox rows by due time, and this migration needs its
-- processes stopped (above); this version's claims read the job queue.
DROP INDEX IF EXISTS outbox_messages_due;
