-- The impersonation ledger: one row per minted token, never deleted. Who asked (actor), for whom (target),
-- why, when, and when and from where it was redeemed. Only the token's SHA-256 is stored.
-- `month` is the UTC calendar month of the mint ('2026-11'), the period the quota counts in.
-- A row is updated once or twice (redeemed, revoked), never in an indexed column: the free space left in
-- each page lets those be HOT updates, which touch none of the five indexes.
CREATE TABLE impersonations (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  token_hash bytea NOT NULL,
  actor_user_id uuid NOT NULL,
  target_user_id uuid NOT NULL,
  reason text NOT NULL,
  landing_url text,
  month text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  redeemed_at timestamptz,
  redeemed_ip text,
  redeemed_user_agent text,
  session_id uuid,
  revoked_at timestamptz,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, actor_user_id) REFERENCES users (environment_id, id),
  FOREIGN KEY (environment_id, target_user_id) REFERENCES users (environment_id, id)
) WITH (fillfactor = 80);
CREATE UNIQUE INDEX impersonations_token_hash_key ON impersonations (environment_id, token_hash);
-- The ledger's three lists (by month, by actor, by target), each a range of one index in id order.
CREATE INDEX impersonations_by_month ON impersonations (environment_id, month, id);
CREATE INDEX impersonations_by_actor ON impersonations (environment_id, actor_user_id, id);
CREATE INDEX impersonations_by_target ON impersonations (environment_id, target_user_id, id);

-- Mints per environment and UTC month. The quota is checked and counted by one conditional upsert on
-- this row, so it holds exactly across processes, and costs the same with any number of ledger rows.
CREATE TABLE impersonation_usage (
  environment_id uuid NOT NULL REFERENCES environments (id),
  month text NOT NULL,
  used integer NOT NULL,
  PRIMARY KEY (environment_id, month)
);
