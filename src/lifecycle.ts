import { emailAddressesUserHooks } from './email-addresses/primary.js';
import { organizationDomainsUserHooks } from './organization-domains/service.js';
import { registerUserHooks } from './users/hooks.js';

/**
 * Registers what the newer domains do when a user is created, changes email or is deleted (users/hooks.ts), so
 * users/ calls them in its transactions without importing them. Every entry point that builds the users domain
 * calls it first: buildApp (the server, and so the first start, which runs after it) and the CLI's services;
 * calling it again changes nothing.
 */
export function registerLifecycleHooks() {
  registerUserHooks(emailAddressesUserHooks);
  registerUserHooks(organizationDomainsUserHooks);
}
