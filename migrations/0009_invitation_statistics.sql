-- The planner estimates jsonb containment and email LIKE from a sample of whole values. At the default
-- sample a selective filter whose value happens to be sampled looks 20x commoner than it is, and the plan
-- flips to walking the primary key (100 ms to 1.5 s at 1M rows instead of ~2 ms). A larger sample keeps
-- the estimate honest for a little more planning time; see bench/results/invitations.md.
ALTER TABLE invitations
  ALTER COLUMN public_metadata SET STATISTICS 2500,
  ALTER COLUMN private_metadata SET STATISTICS 2500,
  ALTER COLUMN email SET STATISTICS 1000;
