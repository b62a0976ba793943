-- An operator of the dashboard (issue 30) impersonates as themselves: operators are users of the reserved
-- `operators` environment, not of the environment they act in, so the ledger records them in a column of their
-- own, without a foreign key into the target's environment. Every row names exactly one actor: a user of the
-- environment (actorUserId of the Server API mint) or an operator (a mint made with the operator's session).
-- The quota (impersonation_usage) counts both alike.
ALTER TABLE impersonations ALTER COLUMN actor_user_id DROP NOT NULL;
ALTER TABLE impersonations ADD COLUMN actor_operator_id uuid;
ALTER TABLE impersonations ADD CONSTRAINT impersonations_one_actor CHECK ((actor_user_id IS NULL) <> (actor_operator_id IS NULL));
