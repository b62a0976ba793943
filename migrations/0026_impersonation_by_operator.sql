-- An operator of the dashboard (issue 30) impersonates as themselves: operators are users of the reserved
-- `operators` environment, not of the environment they act in, so the ledger records them in a column of their
-- own, without a foreign key into the target's environment. Every row names exactly one actor: a user of the
-- environment (actorUserId of the Server API mint) or an operator (a mint made with the operator's session).
-- The quota (impersonation_usage) counts both alike.
-- rolling-upgrade: only this version writes a NULL actor (a dashboard operator's mint); a process of the version
-- before lists such a row with actorUserId "" (its serializer writes null as an empty string) until it is
-- replaced, and uses the column for nothing else.
ALTER TABLE impersonations ALTER COLUMN actor_user_id DROP NOT NULL;
ALTER TABLE impersonations ADD COLUMN actor_operator_id uuid;
-- rolling-upgrade: every row the previous version writes names a user actor and no operator, which satisfies it;
-- the validating scan reads the ledger (bounded by the monthly mint quotas) under a short lock.
ALTER TABLE impersonations ADD CONSTRAINT impersonations_one_actor CHECK ((actor_user_id IS NULL) <> (actor_operator_id IS NULL));
