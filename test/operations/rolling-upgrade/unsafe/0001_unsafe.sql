-- Each statement below is one an old process could notice.
ALTER TABLE users DROP COLUMN nickname;
ALTER TABLE users RENAME COLUMN name TO full_name;
ALTER TABLE users ALTER COLUMN locale TYPE varchar(5);
ALTER TABLE users ALTER COLUMN name SET NOT NULL;
ALTER TABLE users ADD COLUMN tier text NOT NULL;
ALTER TABLE users ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
ALTER TABLE users ADD COLUMN token uuid DEFAULT gen_random_uuid();
ALTER TABLE users ADD CONSTRAINT users_name_check CHECK (name <> '');
ALTER TABLE sessions DROP CONSTRAINT sessions_pkey;
ALTER TABLE users ALTER COLUMN email DROP NOT NULL;
ALTER TABLE users ALTER COLUMN status DROP DEFAULT;
DROP TABLE legacy;
DROP INDEX IF EXISTS users_status;
ALTER TABLE users RENAME TO accounts;
ALTER INDEX users_status RENAME TO users_by_status;
CREATE UNIQUE INDEX users_name_key ON users (environment_id, name);
CREATE TRIGGER users_touch BEFORE UPDATE ON public.users FOR EACH ROW EXECUTE FUNCTION touch();
CREATE OR REPLACE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
UPDATE users SET locale = 'en' WHERE locale IS NULL;
DELETE FROM sessions WHERE revoked_at IS NOT NULL;
INSERT INTO email_addresses (id, email) SELECT id, email FROM users;
DO $$ BEGIN EXECUTE 'ALTER TABLE users DROP COLUMN name'; END $$;
TRUNCATE rate_limit_windows;
ALTER TABLE "Users" ADD COLUMN fine text,
  DROP COLUMN "Old";
REVOKE SELECT ON users FROM gatehouse;
ALTER TABLE users ALTER COLUMN email TYPE citext, ALTER COLUMN email SET NOT NULL;
