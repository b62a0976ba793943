import { Page } from '../ui/page.js';

/** The environment's settings, secret keys, allowed origins, OAuth providers and signing keys (being built). */
export function EnvironmentSettingsScreen() {
  return <Page title="Environment settings"><p className="muted">This screen is being built.</p></Page>;
}
