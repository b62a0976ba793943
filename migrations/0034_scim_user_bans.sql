-- Whether the directory itself banned the user it links (SCIM `active: false`). A directory lifts only its own
-- ban with `active: true`: a ban an operator made, or another directory's, stays. The default says "not this
-- directory's", which is what the previous version's processes keep writing; they never read it.
ALTER TABLE scim_users ADD COLUMN banned_by_directory boolean NOT NULL DEFAULT false;
