import { Page } from '../ui/page.js';

/** Organizations of the environment (being built). */
export function OrganizationsScreen() {
  return <Page title="Organizations"><p className="muted">This screen is being built.</p></Page>;
}
