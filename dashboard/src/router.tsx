import type { QueryClient } from '@tanstack/react-query';
import { createRootRouteWithContext, createRoute, createRouter, Outlet, redirect } from '@tanstack/react-router';
import { operatorQuery } from './queries.js';
import { AuditEventScreen } from './screens/audit-event.js';
import { AuditLogScreen } from './screens/audit-log.js';
import { validateAuditLogSearch } from './screens/audit-parts.js';
import { EnvironmentSettingsScreen } from './screens/environment-settings.js';
import { EnvironmentsScreen } from './screens/environments.js';
import { invitationStatus, InvitationsScreen, type InvitationStatusFilter } from './screens/invitations.js';
import { Layout } from './screens/layout.js';
import { NotFoundScreen } from './screens/not-found.js';
import { OrganizationScreen } from './screens/organization.js';
import { OrganizationsScreen } from './screens/organizations.js';
import { OutboxScreen } from './screens/outbox.js';
import { SetPasswordScreen } from './screens/set-password.js';
import { SignInScreen } from './screens/sign-in.js';
import { UserScreen } from './screens/user.js';
import { UserCreateScreen } from './screens/user-create.js';
import { UsersScreen } from './screens/users.js';
import { validateUsersSearch } from './screens/users-search.js';
import { WebhookEndpointScreen } from './screens/webhook-endpoint.js';
import { validateWebhookEndpointSearch } from './screens/webhook-parts.js';
import { WebhooksScreen } from './screens/webhooks.js';

const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

const rootRoute = createRootRouteWithContext<{ queryClient: QueryClient }>()({ component: Outlet, notFoundComponent: NotFoundScreen });

const signInRoute = createRoute({
  getParentRoute: () => rootRoute, path: 'sign-in', component: SignInScreen,
  validateSearch: (search: Record<string, unknown>): { redirect?: string } => ({ redirect: text(search.redirect) }),
});

const setPasswordRoute = createRoute({
  getParentRoute: () => rootRoute, path: 'set-password', component: SetPasswordScreen,
  validateSearch: (search: Record<string, unknown>): { token?: string } => ({ token: text(search.token) }),
});

/** Every screen but sign-in needs a signed-in operator; without one, sign-in comes first and then the screen asked for. */
const signedInRoute = createRoute({
  getParentRoute: () => rootRoute, id: 'signed-in', component: Layout,
  beforeLoad: async ({ context, location }) => {
    const operator = await context.queryClient.fetchQuery(operatorQuery);
    if (!operator) throw redirect({ to: '/sign-in', search: { redirect: location.href } });
    return { operator };
  },
});

const homeRoute = createRoute({
  getParentRoute: () => signedInRoute, path: '/',
  beforeLoad: () => { throw redirect({ to: '/environments' }); },
});

const environmentsRoute = createRoute({ getParentRoute: () => signedInRoute, path: 'environments', component: EnvironmentsScreen });

const usersRoute = createRoute({
  getParentRoute: () => signedInRoute, path: 'environments/$environmentId/users', component: UsersScreen,
  validateSearch: validateUsersSearch,
});

const userRoute = createRoute({ getParentRoute: () => signedInRoute, path: 'environments/$environmentId/users/$userId', component: UserScreen });
const userCreateRoute = createRoute({ getParentRoute: () => signedInRoute, path: 'environments/$environmentId/users/new', component: UserCreateScreen });

/** Every screen of one environment lives under its id, so each is a deep link. */
const inEnvironment = <P extends string>(path: P) => `environments/$environmentId/${path}` as const;

const settingsRoute = createRoute({ getParentRoute: () => signedInRoute, path: inEnvironment('settings'), component: EnvironmentSettingsScreen });
const organizationsRoute = createRoute({
  getParentRoute: () => signedInRoute, path: inEnvironment('organizations'), component: OrganizationsScreen,
  validateSearch: (search: Record<string, unknown>): { name?: string; cursor?: string } => ({ name: text(search.name), cursor: text(search.cursor) }),
});
const organizationRoute = createRoute({ getParentRoute: () => signedInRoute, path: inEnvironment('organizations/$organizationId'), component: OrganizationScreen });
const invitationsRoute = createRoute({
  getParentRoute: () => signedInRoute, path: inEnvironment('invitations'), component: InvitationsScreen,
  validateSearch: (search: Record<string, unknown>): { status?: InvitationStatusFilter; search?: string; cursor?: string } =>
    ({ status: invitationStatus(search.status), search: text(search.search), cursor: text(search.cursor) }),
});
const auditLogRoute = createRoute({ getParentRoute: () => signedInRoute, path: inEnvironment('audit-log'), component: AuditLogScreen, validateSearch: validateAuditLogSearch });
const auditEventRoute = createRoute({ getParentRoute: () => signedInRoute, path: inEnvironment('audit-log/$eventId'), component: AuditEventScreen });
const outboxRoute = createRoute({ getParentRoute: () => signedInRoute, path: inEnvironment('outbox'), component: OutboxScreen });
const webhooksRoute = createRoute({ getParentRoute: () => signedInRoute, path: inEnvironment('webhooks'), component: WebhooksScreen });
const webhookEndpointRoute = createRoute({
  getParentRoute: () => signedInRoute, path: inEnvironment('webhooks/$endpointId'), component: WebhookEndpointScreen, validateSearch: validateWebhookEndpointSearch,
});

const routeTree = rootRoute.addChildren([signInRoute, setPasswordRoute, signedInRoute.addChildren([
  homeRoute, environmentsRoute, usersRoute, userRoute, userCreateRoute, settingsRoute, organizationsRoute, organizationRoute,
  invitationsRoute, auditLogRoute, auditEventRoute, outboxRoute, webhooksRoute, webhookEndpointRoute,
])]);

export function createDashboardRouter(queryClient: QueryClient) {
  return createRouter({ routeTree, basepath: '/dashboard', context: { queryClient }, defaultPreload: 'intent', scrollRestoration: true });
}

declare module '@tanstack/react-router' {
  interface Register { router: ReturnType<typeof createDashboardRouter> }
}
