import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { accountClientRoutes } from './account/routes.js';
import { createAccountService } from './account/service.js';
import { dashboardRoutes } from './dashboard/routes.js';
import { auditServerRoutes } from './audit/routes.js';
import { createAuditService } from './audit/service.js';
import { impersonationRedeemRoutes } from './auth/routes/impersonation.js';
import { invitationSignUpRoutes } from './auth/routes/invitations.js';
import { externalSignInRoutes } from './auth/routes/oauth.js';
import { passwordAuthRoutes, signOutRoutes } from './auth/routes/passwords.js';
import { createEmailedCodesService } from './auth/service/codes.js';
import { createEnterpriseSignIn, createExternalSignIn } from './auth/service/external.js';
import { createImpersonationSignIn } from './auth/service/impersonation.js';
import { createInvitationSignUps } from './auth/service/invitation-sign-ups.js';
import { sessionIssuer } from './auth/service/issue-session.js';
import { createPasswordAuthService } from './auth/service/passwords.js';
import { passkeySignInRoutes } from './auth/routes/passkeys.js';
import { secondFactorRoutes } from './auth/routes/second-factor.js';
import { createPasskeySignIn } from './auth/service/passkeys.js';
import { createSecondFactorStep } from './auth/service/second-factor.js';
import { factorsClientRoutes, factorsServerRoutes } from './factors/routes.js';
import { passkeysClientRoutes, passkeysServerRoutes } from './passkeys/routes.js';
import { createPasskeysService } from './passkeys/service.js';
import { createFactorsService } from './factors/service.js';
import { csrfTokens } from './hosted-pages/csrf.js';
import { hostedPagesRoutes } from './hosted-pages/routes.js';
import { createHostedPages } from './hosted-pages/service.js';
import { createAccountPages } from './hosted-pages/account/service.js';
import { createSecurityPages } from './hosted-pages/security/service.js';
import { emailAddressesClientRoutes, emailAddressesServerRoutes } from './email-addresses/routes.js';
import { createEmailAddressesService } from './email-addresses/service.js';
import { allowedOriginsServerRoutes, environmentClientRoutes, environmentsAdminRoutes } from './environments/routes.js';
import { adminTokenMatches, createEnvironmentsService } from './environments/service.js';
import { invitationsServerRoutes } from './invitations/routes.js';
import { createTxtLookup, type DnsOptions } from './organization-domains/dns.js';
import { organizationDomainsClientRoutes, organizationDomainsServerRoutes } from './organization-domains/routes.js';
import { createOrganizationDomainsService } from './organization-domains/service.js';
import { organizationInvitationsClientRoutes, organizationInvitationsServerRoutes } from './organization-invitations/routes.js';
import { createOrganizationInvitationsService } from './organization-invitations/service.js';
import { createMemberActions } from './organizations/member-actions.js';
import { organizationRoleSetsAdminRoutes, organizationsClientRoutes, organizationsServerRoutes } from './organizations/routes.js';
import { createOrganizationsService } from './organizations/service.js';
import { createInvitationsService } from './invitations/service.js';
import { impersonationServerRoutes } from './impersonation/routes.js';
import { createImpersonationService } from './impersonation/service.js';
import { sessionTokensAdminRoutes, sessionTokensClientRoutes, sessionTokensPublicRoutes, sessionTokensServerRoutes } from './session-tokens/routes.js';
import { createFirstSigningKey, createSessionTokensService } from './session-tokens/service.js';
import { createSealer } from './platform/crypto/encryption.js';
import { oauthAdminRoutes, oauthServerRoutes, oauthSessionRoutes } from './oauth/routes.js';
import { createRelyingParty } from './oauth/relying-party.js';
import { createOAuthProvidersAdmin } from './oauth/provider-admin.js';
import { createOAuthService } from './oauth/service.js';
import type { Clock } from './platform/clock.js';
import type { Db } from './platform/db/database.js';
import type { Notifications } from './platform/db/notifications.js';
import { withDeadline } from './platform/db/pool.js';
import { warnOnUntrustedForwarding } from './platform/http/forwarded-warning.js';
import { capConnections, httpServerOptions, type HttpLimits } from './platform/http/limits.js';
import { acceptJsonBodies } from './platform/http/json-body.js';
import { registerMetrics, type MetricsExposure } from './platform/http/metrics-route.js';
import { serializeRequest } from './platform/http/request-log.js';
import { createMetrics, watchJobQueue, watchMailBacklog, watchPool, type Metrics, type PoolStats } from './platform/metrics.js';
import { adminPlane, clientPlane, decorateRequests, frontendRoot, serverPlane } from './platform/http/planes.js';
import { ProblemError, registerProblemHandlers, replyWithProblem } from './platform/http/problem.js';
import { DOCS_CSP, registerSecurityHeaders } from './platform/http/security-headers.js';
import { registerSchemaCompilers } from './platform/http/validation.js';
import { DAY_MS, HOUSEKEEPING_DEFAULTS, scheduleMaintenance, type Housekeeping } from './platform/maintenance.js';
import { Problem } from './platform/http/common-schemas.js';
import { API_TAGS } from './platform/http/api-tags.js';
import { withNamedSchemas } from './platform/http/openapi-components.js';
import { PACKAGE_VERSION } from './platform/version.js';
import type { DeliveryOptions } from './platform/mail/delivery.js';
import { createMailer, DEFAULT_MAIL_FROM } from './platform/mail/mailer.js';
import { createOutboxStore } from './platform/mail/outbox-store.js';
import { createRateLimiter } from './platform/rate-limit.js';
import { createBackground } from './platform/background.js';
import { createJobsStore } from './platform/jobs/store.js';
import { createJobWorker, JOB_WORKER_DEFAULTS, type JobWorkerOptions } from './platform/jobs/worker.js';
import { WEBHOOK_DELIVERY_DEFAULTS, WEBHOOK_DELIVERY_JOB, webhookDeliveryHandler, type WebhookDeliveryOptions } from './webhooks/delivery.js';
import { createWebhookSender, WEBHOOK_SENDER_DEFAULTS, type SenderOptions } from './webhooks/target.js';
import { dataRequestsClientRoutes, dataRequestsServerRoutes } from './data-requests/routes.js';
import { createDataRequestsService } from './data-requests/service.js';
import { sessionsClientRoutes } from './sessions/routes.js';
import { createSessionsService } from './sessions/service.js';
import { usersClientRoutes, usersServerRoutes } from './users/routes.js';
import { operatorAccountRoutes, operatorPasswordRoutes } from './operators/routes.js';
import { createOperatorAccounts } from './operators/service.js';
import { operatorSessionRoutes, operatorSignInRoutes } from './auth/routes/operator-sessions.js';
import { createOperatorSessions } from './auth/service/operator-sessions.js';
import { createUsersService } from './users/service.js';
import { registerLifecycleHooks } from './lifecycle.js';
import { webhooksServerRoutes } from './webhooks/routes.js';
import { createScimGroups } from './scim/groups.js';
import { scimPlane } from './scim/plane.js';
import { createRoleResolver } from './scim/roles.js';
import { directoriesServerRoutes, scimRoutes } from './scim/routes.js';
import { createDirectoriesService } from './scim/service.js';
import { createSamlServiceProvider } from './sso/saml.js';
import { ssoConnectionsServerRoutes } from './sso/routes.js';
import { createSsoConnectionsService } from './sso/service.js';
import { createSsoSignIn } from './sso/sign-in.js';
import { enterpriseSignInRoutes } from './auth/routes/sso.js';
import { createScimUsers } from './scim/users.js';
import { createWebhooksService } from './webhooks/service.js';

export interface AppOptions {
  db: Db;
  clock: Clock;
  /** Cache eviction across processes; omitted means this process makes every change (embedded database). */
  notifications?: Notifications;
  /** Port used in default frontend hosts (`<slug>.localhost:<port>`). */
  publicPort: number;
  adminToken?: string;
  smtpUrl?: string;
  mailFrom?: string;
  trustedProxies?: string[];
  logLevel?: string;
  /** The metrics registry and counters; main passes its own when it serves them on a separate port. */
  metrics?: Metrics;
  /** Who may scrape GET /metrics on this app (default: anyone); `own_port` leaves it off the app. */
  metricsExposure?: MetricsExposure;
  /** The database pool's fill, for the pool gauges (PostgreSQL only). */
  poolStats?: () => PoolStats;
  /** Where log lines go (default stdout); tests capture them. */
  logStream?: { write(line: string): void };
  /** Timeouts and the connection cap (default HTTP_LIMITS); tests make them small. */
  httpLimits?: HttpLimits;
  /** 32 bytes that seal the secrets kept in the database (the signing keys' private halves, OAuth client secrets). */
  encryptionKey: Buffer;
  /** How long a call to an external sign-in provider may take (default 10 s); tests make it short. */
  oauthTimeoutSeconds?: number;
  /** Housekeeping interval and retentions (HOUSEKEEPING_DEFAULTS; GATEHOUSE_HOUSEKEEPING_* and GATEHOUSE_RETENTION_*). */
  housekeeping?: Partial<Housekeeping>;
  /** How often and how soon the job queue tries mail again (DELIVERY_DEFAULTS); tests make it quick (and set `jobs` for polling and leases). */
  mailDelivery?: Partial<DeliveryOptions>;
  /** How the job worker retries, leases and polls (JOB_WORKER_DEFAULTS); tests make it quick. */
  jobs?: Partial<JobWorkerOptions>;
  /** Where webhook deliveries may go and how long an attempt may take (WEBHOOK_SENDER_DEFAULTS), and their backoff; tests make them quick. */
  webhooks?: { sender?: Partial<SenderOptions>; delivery?: Partial<WebhookDeliveryOptions> };
  /** False leaves the job worker off, so jobs run only when app.runJobs() is called (tests that look at a job's state before it runs). */
  jobsInBackground?: boolean;
  /** The DNS servers and timeout of domain verification (GATEHOUSE_DNS_SERVERS, GATEHOUSE_DNS_TIMEOUT_MS); tests point it at their own server. */
  dns?: DnsOptions;
  /** The origin people reach the service at (GATEHOUSE_BASE_URL), for links such as an operator's set-password link; default the request's. */
  baseUrl?: string;
}

export const BODY_LIMIT_BYTES = 64 * 1024;
/** /readyz answers 503 when the database has not answered `select 1` by then: a probe must never hang with it. */
const READINESS_DEADLINE_MS = 2000;

/** The only composition root: builds every store and service and registers the three planes. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  registerLifecycleHooks();
  const { db, clock } = options;
  const app = Fastify({
    logger: { level: options.logLevel ?? 'info', redact: ['req.headers.authorization', 'req.headers.cookie'], serializers: { req: serializeRequest }, ...(options.logStream && { stream: options.logStream }) },
    genReqId: () => randomUUID(),
    trustProxy: options.trustedProxies?.length ? options.trustedProxies : false,
    bodyLimit: BODY_LIMIT_BYTES,
    ...httpServerOptions(options.httpLimits),
    forceCloseConnections: 'idle',
    // During a drain, finish requests that arrive on open keep-alive connections instead of a non-problem 503.
    return503OnClosing: false,
    // Errors raised before routing (a badly encoded URL) are problem+json too.
    frameworkErrors: replyWithProblem,
  });
  acceptJsonBodies(app);
  capConnections(app, options.httpLimits);
  warnOnUntrustedForwarding(app);

  const metrics = options.metrics ?? createMetrics();
  if (options.poolStats) watchPool(metrics, options.poolStats);
  watchMailBacklog(metrics, createOutboxStore(db).backlog, () => clock.now());
  // The job queue's worker; it is created before the services that queue jobs (mail first) so they can wake it.
  const jobHandlers: Parameters<typeof createJobWorker>[0]['handlers'] = {};
  const jobWorker = createJobWorker({ db, clock, log: app.log, notifications: options.notifications, handlers: jobHandlers, options: { ...JOB_WORKER_DEFAULTS, ...options.jobs } });
  const mailer = createMailer({
    db, clock, log: app.log, metrics, smtpUrl: options.smtpUrl, from: options.mailFrom ?? DEFAULT_MAIL_FROM,
    delivery: options.mailDelivery, wakeJobs: jobWorker.wake,
  });
  Object.assign(jobHandlers, mailer.jobHandlers);
  const sealer = createSealer(options.encryptionKey);
  const environments = createEnvironmentsService({
    db, clock, defaultFrontendPort: options.publicPort, notifications: options.notifications,
    onCreate: (trx, environmentId, now) => createFirstSigningKey(trx, environmentId, sealer, now),
  });
  const sessions = createSessionsService({ db, clock });
  const users = createUsersService({ db, clock, environments, sessions });
  const limiter = createRateLimiter(db, clock, metrics);
  const issueSession = sessionIssuer(clock);
  const background = createBackground(app.log);
  const secondStep = createSecondFactorStep({ db, clock, sealer, issueSession, users });
  const codes = createEmailedCodesService({ db, clock, mailer, limiter, issueSession, background, users, secondStep });
  const passwords = createPasswordAuthService({ db, clock, limiter, mailer, metrics, issueSession, background, users, codes, secondStep });
  const factors = createFactorsService({ db, clock, sealer, users });
  const passkeys = createPasskeysService({ db, clock, encryptionKey: options.encryptionKey, users });
  const invitations = createInvitationsService({ db, clock, mailer, limiter, environments, users });
  const audit = createAuditService({
    db, clock, limiter, metrics,
    auditLogEnabled: async (environmentId) => (await environments.record(environmentId)).settings.auditLogEnabled,
    existingUserIds: users.existingIds,
    auditRetentions: () => environments.auditRetentions(),
  });
  const organizations = createOrganizationsService({ db, clock, users, environments });
  const organizationDomains = createOrganizationDomainsService({ db, clock, organizations, lookupTxt: createTxtLookup(options.dns) });
  // SCIM provisioning per organization directory: users and memberships through the users' and organizations' functions.
  const directories = createDirectoriesService({ db, clock, organizations, baseUrl: options.baseUrl });
  const scimRoles = createRoleResolver({ db, organizations });
  const scimUsers = createScimUsers({ db, clock, roles: scimRoles, removeMember: organizations.removeMember });
  const scimGroups = createScimGroups({ db, clock, roles: scimRoles });
  const organizationInvitations = createOrganizationInvitationsService({ db, clock, mailer, limiter, environments, organizations, users });
  const impersonation = createImpersonationService({ db, clock, environments, users, metrics });
  const sessionTokens = createSessionTokensService({ db, clock, sealer, notifications: options.notifications, environments, sessions });
  const relyingParty = createRelyingParty({ clock, timeoutSeconds: options.oauthTimeoutSeconds ?? 10 });
  const oauth = createOAuthService({ db, clock, sealer, users, metrics, relyingParty });
  // Enterprise sign-in per organization: connections on the Server API, the SAML and OpenID Connect dance on the client plane.
  const ssoConnections = createSsoConnectionsService({ db, clock, sealer, environments, organizations, metadataTimeoutMs: (options.oauthTimeoutSeconds ?? 10) * 1000 });
  const ssoSignIn = createSsoSignIn({ db, clock, sealer, saml: createSamlServiceProvider(), relyingParty, mailer, organizations });
  const outbox = createOutboxStore(db);
  const account = createAccountService({ db, clock, limiter, mailer, sealer, users });
  const emailAddresses = createEmailAddressesService({ db, clock, mailer, limiter, users });
  const dataRequests = createDataRequestsService({ db, clock, environments, mailer, wakeJobs: jobWorker.wake });
  Object.assign(jobHandlers, dataRequests.jobHandlers);
  const webhookSender = createWebhookSender({ ...WEBHOOK_SENDER_DEFAULTS, ...options.webhooks?.sender });
  jobHandlers[WEBHOOK_DELIVERY_JOB] = webhookDeliveryHandler({
    db, clock, sealer, log: app.log, sender: webhookSender, metrics, options: { ...WEBHOOK_DELIVERY_DEFAULTS, ...options.webhooks?.delivery },
  });
  watchJobQueue(metrics, createJobsStore(db).depth, () => clock.now());
  const webhooks = createWebhooksService({ db, clock, sealer, wakeJobs: jobWorker.wake });
  // Operators are the users of a reserved environment: the end-users' sign-in, lockout, factors and sessions run for them.
  const operatorAccounts = createOperatorAccounts({ db, clock, environments, users });
  const operatorSessions = createOperatorSessions({
    accounts: operatorAccounts, passwords, secondStep, sessions, factors, isCustomerEnvironment: environments.isCustomerEnvironment,
  });
  // The sign-in wing: every route that ends in a session, each through issueSession.
  const invitationSignUps = createInvitationSignUps({ db, clock, issueSession, invitations, organizationInvitations });
  const passkeySignIn = createPasskeySignIn({ db, clock, limiter, issueSession, passkeys, users });
  const signInRoutes = [
    passwordAuthRoutes(passwords, codes),
    invitationSignUpRoutes(invitationSignUps),
    impersonationRedeemRoutes(createImpersonationSignIn({ db, clock, issueSession, metrics })),
    externalSignInRoutes(createExternalSignIn({ oauth, secondStep })),
    enterpriseSignInRoutes(createEnterpriseSignIn({ sso: ssoSignIn, secondStep })),
    secondFactorRoutes(secondStep),
    passkeySignInRoutes(passkeySignIn),
  ];

  registerSecurityHeaders(app); // before the 404 handler, which only gets the hooks added before it
  registerSchemaCompilers(app);
  decorateRequests(app);
  registerProblemHandlers(app);
  registerMetrics(app, metrics, options.metricsExposure);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Gatehouse', version: PACKAGE_VERSION,
        description: 'Self-hostable identity service. The Server API (`/api/server/v1`, secret key) is for your backend; the client plane '
          + "(`/_svc`, served on each environment's frontend host) for your apps; the admin API (`/api/admin/v1`, GATEHOUSE_ADMIN_TOKEN or an operator's session) for operators.",
      },
      servers: [{ url: 'http://localhost:3000', description: "A local Gatehouse (npm start). The client plane answers on each environment's frontend host (the development environment's is http://localhost:3000)." }],
      tags: API_TAGS,
      components: { securitySchemes: {
        secretKey: { type: 'http', scheme: 'bearer', description: 'The environment secret key (sk_...).' },
        adminToken: { type: 'http', scheme: 'bearer', description: 'GATEHOUSE_ADMIN_TOKEN.' },
        sessionCookie: { type: 'apiKey', in: 'cookie', name: '__session', description: 'The HttpOnly session cookie a browser sign-in sets.' },
        sessionToken: { type: 'http', scheme: 'bearer', description: 'The session token a native sign-in (`?_is_native=true`) answers, as a bearer token.' },
        operatorSession: { type: 'apiKey', in: 'cookie', name: 'gatehouse_operator', description: "An operator's session cookie (POST /api/admin/v1/operator-sessions); changes also need the service's own Origin." },
        operatorEnvironment: { type: 'apiKey', in: 'header', name: 'Gatehouse-Environment', description: 'With an operator session on the Server API: the id of the environment to act in.' },
      } },
    },
    // Every error has the one problem+json shape, so the document states it once per operation here.
    // Each plane states its own security on its routes (PLANE_SECURITY).
    transform: ({ schema, url }) => {
      if (!schema || schema.hide) return { schema, url };
      const problem = { description: 'Error (RFC 9457)', content: { 'application/problem+json': { schema: Problem } } };
      return { schema: { ...schema, response: { ...(schema.response as object), '4XX': problem, '5XX': problem } }, url };
    },
    transformObject: (document) => withNamedSchemas('openapiObject' in document ? document.openapiObject : document.swaggerObject),
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: DOCS_CSP, theme: { title: `Gatehouse ${PACKAGE_VERSION}: API reference` } });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  // The root points a newcomer somewhere useful: a browser to the reference page, anything else to a map.
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    if (request.headers.accept?.includes('text/html')) return reply.redirect('/docs', 302);
    return {
      name: 'Gatehouse', version: PACKAGE_VERSION, reference: '/docs', openapi: '/openapi.json',
      serverApi: '/api/server/v1', adminApi: '/api/admin/v1', clientPlane: "/_svc on each environment's frontend host", health: '/healthz',
    };
  });
  await app.register(dashboardRoutes());
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (request) => {
    try {
      await withDeadline(sql`select 1`.execute(db), READINESS_DEADLINE_MS, 'no answer from the database');
    } catch (err) {
      request.log.warn({ err: { message: (err as Error).message } }, 'readiness check failed');
      throw new ProblemError(503, 'unavailable', 'The database is not reachable.', {}, { 'Retry-After': '1' });
    }
    return { status: 'ready' };
  });

  await app.register(serverPlane((key) => environments.authenticateSecretKey(key), [
    usersServerRoutes(users),
    emailAddressesServerRoutes(emailAddresses),
    invitationsServerRoutes(invitations),
    allowedOriginsServerRoutes(environments),
    auditServerRoutes(audit),
    organizationsServerRoutes(organizations),
    organizationInvitationsServerRoutes(organizationInvitations),
    organizationDomainsServerRoutes(organizationDomains),
    impersonationServerRoutes(impersonation),
    sessionTokensServerRoutes(sessionTokens),
    oauthServerRoutes(oauth),
    factorsServerRoutes(factors),
    dataRequestsServerRoutes(dataRequests),
    passkeysServerRoutes(passkeys),
    webhooksServerRoutes(webhooks),
    directoriesServerRoutes(directories),
    ssoConnectionsServerRoutes(ssoConnections),
  ], options.adminToken ? operatorSessions.authenticator : undefined), { prefix: '/api/server/v1' });

  await app.register(scimPlane(directories.authenticate, [scimRoutes({ users: scimUsers, groups: scimGroups })]), { prefix: '/scim/v2' });

  const memberActions = createMemberActions(organizations);
  await app.register(clientPlane({
    resolveEnvironment: (host) => environments.findByHost(host),
    authenticateSession: (environmentId, token) => sessions.authenticate(environmentId, token),
    publicRoutes: [...signInRoutes, sessionTokensPublicRoutes(sessionTokens), environmentClientRoutes(environments, oauth.listEnabled)],
    sessionRoutes: [usersClientRoutes(users), emailAddressesClientRoutes(emailAddresses), accountClientRoutes(account), factorsClientRoutes(factors), passkeysClientRoutes(passkeys), sessionsClientRoutes(sessions), signOutRoutes(sessions), organizationsClientRoutes(memberActions), organizationInvitationsClientRoutes(organizationInvitations), organizationDomainsClientRoutes(organizationDomains), sessionTokensClientRoutes(sessionTokens), oauthSessionRoutes(oauth), dataRequestsClientRoutes(dataRequests)],
  }), { prefix: '/_svc' });

  const hostedPages = createHostedPages({ passwords, codes, secondStep, invitationSignUps, invitations, organizationInvitations, sessions, users, providers: oauth.listEnabled,
    operatorName: async (operatorId: string) => {
      const operator = await users.get((await operatorAccounts.environment()).id, operatorId);
      return operator.name ?? operator.email ?? undefined;
    },
  });
  await app.register(frontendRoot((host) => environments.findByHost(host), [
    sessionTokensPublicRoutes(sessionTokens, 'issuerRoot'),
    hostedPagesRoutes({ pages: hostedPages, account: createAccountPages({ users, emailAddresses, account, oauth, organizations: memberActions, dataRequests, providers: oauth.listEnabled }), security: createSecurityPages({ db, account, factors, passkeys, sessions, passkeySignIn }) }, csrfTokens(options.encryptionKey)),
  ]));

  if (options.adminToken) {
    await app.register(adminPlane(options.adminToken, adminTokenMatches, operatorSessions.authenticator, {
      publicRoutes: [operatorSignInRoutes(operatorSessions), operatorPasswordRoutes(operatorAccounts)],
      routes: [
        environmentsAdminRoutes({ environments, outbox: (envId, to) => outbox.list(envId, to), mailMode: mailer.mode }),
        organizationRoleSetsAdminRoutes(organizations),
        sessionTokensAdminRoutes(sessionTokens),
        oauthAdminRoutes(createOAuthProvidersAdmin({ db, clock, sealer, environments })),
        operatorAccountRoutes(operatorAccounts, options.baseUrl),
        operatorSessionRoutes(operatorSessions),
      ],
    }), { prefix: '/api/admin/v1' });
  }

  const housekeeping = { ...HOUSEKEEPING_DEFAULTS, ...options.housekeeping };
  const sweep = scheduleMaintenance(app, {
    pruneRateLimitWindows: limiter.pruneOldWindows, pruneExpiredCodes: codes.pruneExpiredCodes, pruneAuditIdempotencyKeys: audit.pruneIdempotencyKeys,
    expireInvitations: invitations.expireOverdue, pruneOutbox: () => outbox.prune(clock.now(), housekeeping.outboxRetentionDays * DAY_MS),
    pruneOAuthStates: oauth.pruneExpiredStates, pruneEndedSessions: () => sessions.pruneEnded(housekeeping.sessionRetentionDays),
    pruneAuditEvents: audit.pruneExpiredEvents, expireDataExports: dataRequests.expireArchives, pruneMfaChallenges: secondStep.pruneExpired,
    pruneFinishedJobs: () => createJobsStore(db).pruneFinished(new Date(clock.now().getTime() - housekeeping.jobRetentionDays * DAY_MS)),
    prunePasskeyChallenges: passkeys.pruneExpiredChallenges, pruneSsoRequests: ssoConnections.pruneExpired,
    pruneWebhookHistory: () => webhooks.pruneHistory(housekeeping.webhookRetentionDays),
  }, housekeeping.intervalSeconds * 1000);
  app.decorate('runHousekeeping', sweep);
  app.decorate('settled', background.settled);
  app.addHook('onClose', background.settled);
  app.decorate('runJobs', jobWorker.runDue);
  if (options.jobsInBackground !== false) app.addHook('onReady', async () => jobWorker.start());
  app.addHook('onClose', async () => { await jobWorker.stop(); webhookSender.close(); });
  return app;
}

