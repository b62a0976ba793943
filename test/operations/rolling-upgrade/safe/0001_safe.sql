-- Statements that old processes cannot notice, with unsafe words where they do not count:
-- DROP TABLE users; ALTER TABLE users DROP COLUMN email;
/* A block comment: UPDATE users SET email = NULL; /* nested: DELETE FROM users; */ still a comment; */
CREATE TABLE loyalty_points (
  environment_id uuid NOT NULL,
  user_id uuid NOT NULL,
  "drop" integer NOT NULL DEFAULT 0,
  note text DEFAULT 'ALTER TABLE users DROP COLUMN email; --',
  PRIMARY KEY (environment_id, user_id)
);
-- A new table's unique index, trigger and rows: no old process uses it yet.
CREATE UNIQUE INDEX loyalty_points_note_key ON loyalty_points (environment_id, note);
CREATE FUNCTION loyalty_points_touch() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  -- A function body runs when it is called, not when the migration runs.
  DELETE FROM sessions WHERE user_id = NEW.user_id;
  UPDATE users SET name = 'x' WHERE id = NEW.user_id;
  EXECUTE $$ALTER TABLE users DROP COLUMN email$$;
  RETURN NEW;
END
$fn$;
CREATE OR REPLACE FUNCTION loyalty_points_touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
CREATE TRIGGER loyalty_points_touch BEFORE UPDATE ON loyalty_points FOR EACH ROW EXECUTE FUNCTION loyalty_points_touch();
UPDATE loyalty_points SET "drop" = 1;
INSERT INTO webhook_event_sources (action, type) VALUES ('user.rewarded', E'user.updated\'; DROP TABLE users; --');
-- Expanding existing tables: nullable columns, columns with a constant default, indexes, settings.
ALTER TABLE users ADD COLUMN nickname text, ADD COLUMN score integer NOT NULL DEFAULT 0;
ALTER TABLE public.users ADD COLUMN created_by uuid REFERENCES users (id);
ALTER TABLE users ALTER COLUMN name SET DEFAULT 'DROP', ALTER COLUMN email SET STATISTICS 1000, SET (fillfactor = 90);
CREATE INDEX users_nickname ON users (environment_id, nickname);
ALTER INDEX users_nickname ALTER COLUMN 1 SET STATISTICS 500;
COMMENT ON COLUMN users.nickname IS 'Old processes never DROP or RENAME it';
