import type { components } from '@gatehouse/sdk';
import { serverApi } from '../api/gatehouse.js';

export type OrganizationRoles = components['schemas']['OrganizationRoles'];

/** The roles the organization's members may hold (its role set, or the default), shared by every section of its screen. */
export const organizationRolesQuery = (environmentId: string, organizationId: string) => ({
  queryKey: ['organization-roles', environmentId, organizationId],
  queryFn: ({ signal }: { signal: AbortSignal }) => serverApi(environmentId).getOrganizationRoles({ organizationId }, { signal }),
  staleTime: Infinity, // a role set never changes once created
});
