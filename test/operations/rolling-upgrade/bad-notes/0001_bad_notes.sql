-- rolling-upgrade: fine
ALTER TABLE users DROP COLUMN nickname;
-- rolling-upgrade: this note is meant for the DROP below, but a statement came between.
ALTER TABLE users ADD COLUMN nickname text;
DROP INDEX users_status;
-- rolling-upgrade: offline: short
ALTER TABLE users ALTER COLUMN name SET NOT NULL;
