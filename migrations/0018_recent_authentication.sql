-- When the session's user last proved who they are with a password or a second factor (issue 25):
-- a sensitive change (make an address primary, delete the account, a data request) asks for it within
-- the last 10 minutes. NULL for a session started by an emailed code alone or by impersonation, and for
-- every session that existed before this migration. A nullable column without a default is added
-- without rewriting the table.
ALTER TABLE sessions ADD COLUMN authenticated_at timestamptz;
