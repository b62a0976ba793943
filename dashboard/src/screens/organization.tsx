import { Page } from '../ui/page.js';

/** One organization: members, roles, invitations (being built). */
export function OrganizationScreen() {
  return <Page title="Organization"><p className="muted">This screen is being built.</p></Page>;
}
