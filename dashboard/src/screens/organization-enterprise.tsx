import { OrganizationDirectories } from './organization-directories.js';
import { OrganizationDomains } from './organization-domains.js';
import { OrganizationSso } from './organization-sso.js';

/** An organization's enterprise sign-in: its verified domains, its SCIM directories and its SSO connections. */
export function OrganizationEnterprise({ organizationId, environmentId }: { organizationId: string; environmentId: string }) {
  return (
    <section aria-labelledby="enterprise-sign-in" className="enterprise">
      <h2 id="enterprise-sign-in">Enterprise sign-in</h2>
      <OrganizationDomains organizationId={organizationId} environmentId={environmentId} />
      <OrganizationSso organizationId={organizationId} environmentId={environmentId} />
      <OrganizationDirectories organizationId={organizationId} environmentId={environmentId} />
    </section>
  );
}
