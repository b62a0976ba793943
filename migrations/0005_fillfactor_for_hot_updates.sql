-- Sign-in updates a user's attempt counter, and requests touch a session's last activity. Free space on
-- each page lets PostgreSQL make those HOT updates: no new index entries, notably none in the GIN indexes.
ALTER TABLE users SET (fillfactor = 90);
ALTER TABLE sessions SET (fillfactor = 90);
