-- When the last sign-in attempt was reserved: a full failure count with no lock and no recent attempt
-- (an attempt cut off by a crash, or a limit lowered by an operator) can then start over.
ALTER TABLE users ADD COLUMN last_sign_in_attempt_at timestamptz;
