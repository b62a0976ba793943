-- Users found by name (GET /users?nameSearch=, POST /users/search): a case-insensitive substring of the
-- name, first name or last name, through a trigram index as the email search uses (0002, 0016). One
-- index over the three, lower-cased and one per line, so a search reads one index whatever field it
-- matches; the store's NAME_TEXT (src/users/store.ts) is this expression exactly, which is what lets the
-- planner use it. pg_trgm is there since 0002, in PGlite as in PostgreSQL.
CREATE INDEX users_name_trgm ON users USING gin (
  (lower(coalesce(name, '') || E'\n' || coalesce(first_name, '') || E'\n' || coalesce(last_name, ''))) gin_trgm_ops
);

-- As for the email (0016): a larger statistics sample of the indexed expression keeps the planner's
-- estimate of a rare name near the truth, so it reads the index instead of walking the users in id order.
ALTER INDEX users_name_trgm ALTER COLUMN 1 SET STATISTICS 1000;
