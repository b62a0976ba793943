import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { ClientOrganization, OrganizationPageQuery, OrganizationParams } from '../organizations/schemas.js';
import { NoContent, noContent, Page } from '../platform/http/common-schemas.js';
import { clientCaller, serverCaller, signedIn } from '../platform/http/planes.js';
import { CreateDomainBody, DomainParams, OrganizationDomain, OrganizationSuggestion, UpdateDomainBody } from './schemas.js';
import type { OrganizationDomainsService } from './service.js';

const tags = ['Organizations'];
const CREATE = 'The domain is normalized (lower case, punycode; a scheme, path or port is dropped). 400 invalid_domain for no domain name '
  + 'or a public suffix (`com`, `co.uk`), 400 free_email_domain for a public mailbox provider (gmail.com); 409 domain_already_added when '
  + 'the organization has it, 409 domain_taken when another organization of the environment has verified it. Publish `verification` as a '
  + 'DNS TXT record, then call verify.';
const VERIFY = 'Looks the TXT record up now (GATEHOUSE_DNS_SERVERS, else the system resolvers). 200 verified when it holds `verification.value`; '
  + '422 domain_not_verified otherwise, with `lookedUp`, `expected`, `found` and `dnsError` (the DNS failure, if the lookup failed); '
  + '409 domain_taken when another organization of the environment verified the domain first. A verified domain answers 200 as it is.';

/** Server API: an organization's domains. */
export function organizationDomainsServerRoutes(domains: OrganizationDomainsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    app.post('/organizations/:organizationId/domains', {
      schema: { operationId: 'createOrganizationDomain', summary: 'Add a domain to the organization (unverified)', description: CREATE, tags, params: OrganizationParams, body: CreateDomainBody, response: { 201: OrganizationDomain } },
    }, async (req, reply) => reply.code(201).send(await domains.create(req.environmentId, req.params.organizationId, req.body, serverCaller(req))));
    app.get('/organizations/:organizationId/domains', {
      schema: { operationId: 'listOrganizationDomains', summary: "List the organization's domains (ascending id; limit clamped to 1..100)", tags, params: OrganizationParams, querystring: OrganizationPageQuery, response: { 200: Page(OrganizationDomain) } },
    }, (req) => domains.list(req.environmentId, req.params.organizationId, req.query));
    app.get('/organizations/:organizationId/domains/:domainId', {
      schema: { operationId: 'getOrganizationDomain', summary: 'Get a domain of the organization', tags, params: DomainParams, response: { 200: OrganizationDomain } },
    }, (req) => domains.get(req.environmentId, req.params.organizationId, req.params.domainId));
    app.patch('/organizations/:organizationId/domains/:domainId', {
      schema: { operationId: 'updateOrganizationDomain', summary: "Change a domain's enrollment mode", tags, params: DomainParams, body: UpdateDomainBody, response: { 200: OrganizationDomain } },
    }, (req) => domains.update(req.environmentId, req.params.organizationId, req.params.domainId, req.body, serverCaller(req)));
    app.post('/organizations/:organizationId/domains/:domainId/verify', {
      schema: { operationId: 'verifyOrganizationDomain', summary: "Check the domain's DNS TXT record now", description: VERIFY, tags, params: DomainParams, response: { 200: OrganizationDomain } },
    }, (req) => domains.verify(req.environmentId, req.params.organizationId, req.params.domainId, serverCaller(req)));
    app.delete('/organizations/:organizationId/domains/:domainId', {
      schema: { operationId: 'deleteOrganizationDomain', summary: 'Remove a domain from the organization (memberships stay)', tags, params: DomainParams, response: { 204: NoContent } },
    }, async (req, reply) => { await domains.delete(req.environmentId, req.params.organizationId, req.params.domainId, serverCaller(req)); return noContent(reply); });
  };
}

/** Client plane, signed in: organizations suggested by the verified domain of the caller's verified email, and joining one. */
export function organizationDomainsClientRoutes(domains: OrganizationDomainsService): FastifyPluginAsync {
  return async (base) => {
    const app = base.withTypeProvider<TypeBoxTypeProvider>();
    const clientTags = ['Client: organizations'];
    app.get('/me/organization-suggestions', {
      schema: { operationId: 'listMyOrganizationSuggestions', summary: 'Organizations you may join: they verified the domain of your verified primary email (enrollment suggest or automatic) and you are not a member', tags: clientTags, response: { 200: Type.Object({ items: Type.Array(OrganizationSuggestion) }) } },
    }, (req) => domains.suggestions(req.environmentId, signedIn(req).userId));
    app.post('/me/organization-suggestions/:organizationId/accept', {
      schema: { operationId: 'acceptOrganizationSuggestion', summary: "Join a suggested organization with its default role (`member`)", description: '404 organization_not_found when the organization suggests nothing to you.', tags: clientTags, params: OrganizationParams, response: { 200: ClientOrganization } },
    }, (req) => domains.join(req.environmentId, signedIn(req).userId, req.params.organizationId, clientCaller(req)));
  };
}
