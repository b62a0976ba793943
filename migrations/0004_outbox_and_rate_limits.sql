CREATE TABLE outbox_messages (
  environment_id uuid NOT NULL REFERENCES environments (id),
  id uuid NOT NULL,
  to_address text NOT NULL,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id)
);
CREATE INDEX outbox_messages_to ON outbox_messages (environment_id, to_address, id);

-- Fixed-window counters shared by every process: one row per environment, bucket and window.
CREATE TABLE rate_limit_windows (
  environment_id uuid NOT NULL,
  bucket text NOT NULL,
  window_start timestamptz NOT NULL,
  count integer NOT NULL,
  PRIMARY KEY (environment_id, bucket, window_start)
);
