-- Unsafe statements, each with its reason.
-- rolling-upgrade: the previous version stopped reading nickname in the release before this one.
ALTER TABLE users DROP COLUMN nickname;
UPDATE users SET locale = 'en'
  -- rolling-upgrade: the previous version reads a NULL locale as 'en' already, so nothing changes for it.
  WHERE locale IS NULL;
-- Why this one needs a stop:
-- rolling-upgrade: offline: the previous version inserts users without a tier, which fails from here on.
ALTER TABLE users ADD COLUMN tier text NOT NULL;
