-- Verified domains of organizations (enterprise sign-in, part 1). An organization proves it controls a domain
-- by publishing a TXT record `_gatehouse-verification.<domain>` with the row's verification_token (public by
-- design: it proves control only once it is in the domain's DNS, so it is stored as it is). `enrollment`
-- says what a verified domain does for users whose verified primary email is at it: nothing, a suggestion on
-- the client plane, or an automatic membership.
CREATE TABLE organization_domains (
  environment_id uuid NOT NULL,
  id uuid NOT NULL,
  organization_id uuid NOT NULL,
  domain text NOT NULL,
  enrollment text NOT NULL DEFAULT 'none' CHECK (enrollment IN ('none', 'suggest', 'automatic')),
  verification_token text NOT NULL,
  verified_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (environment_id, id),
  FOREIGN KEY (environment_id, organization_id) REFERENCES organizations (environment_id, id) ON DELETE CASCADE
);
-- An organization lists a domain once.
CREATE UNIQUE INDEX organization_domains_organization_domain_key ON organization_domains (environment_id, organization_id, domain);
-- A verified domain belongs to one organization of the environment: the second verification fails here,
-- whatever the processes race (other environments may verify the same domain for their own organizations).
-- It is also how a user's email domain finds its organization.
CREATE UNIQUE INDEX organization_domains_verified_key ON organization_domains (environment_id, domain) WHERE verified_at IS NOT NULL;

-- The changes of a domain are webhook events (see 0028): their audit actions make types of the same name.
-- Only this version records these actions, so the rows change nothing for the previous version's processes.
INSERT INTO webhook_event_sources (action, type) VALUES
  ('organization_domain.created', 'organization_domain.created'),
  ('organization_domain.verified', 'organization_domain.verified'),
  ('organization_domain.updated', 'organization_domain.updated'),
  ('organization_domain.deleted', 'organization_domain.deleted');
