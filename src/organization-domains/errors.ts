import { ProblemError } from '../platform/http/problem.js';
import type { DomainRefusal } from './names.js';

export const domainNotFound = () => new ProblemError(404, 'resource_not_found', 'No domain with this id in this organization.');
export const invalidDomain = ({ reason, detail }: DomainRefusal) =>
  new ProblemError(400, reason === 'free_mail' ? 'free_email_domain' : 'invalid_domain', detail, { reason });
export const domainAlreadyAdded = (domain: string) =>
  new ProblemError(409, 'domain_already_added', `This organization already has the domain ${domain}.`, { domain });
export const domainTaken = (domain: string) =>
  new ProblemError(409, 'domain_taken', `${domain} is verified by another organization of this environment; it must delete the domain first.`, { domain });
export const domainNotVerified = (domain: string, lookup: DnsLookup) =>
  new ProblemError(422, 'domain_not_verified', lookup.error
    ? `Could not check the TXT record ${lookup.name}: the DNS lookup failed (${lookup.error}). Try again later.`
    : `The TXT record ${lookup.name} does not hold the verification value${lookup.found.length ? '' : ' (no TXT record found)'}. Publish it and verify again; DNS changes can take a while to spread.`,
  { domain, lookedUp: { type: 'TXT', name: lookup.name }, expected: lookup.expected, found: lookup.found, dnsError: lookup.error });
export const noSuggestion = () => new ProblemError(404, 'organization_not_found', 'No organization suggests itself to you by a verified domain of your email.');

/** What one verification looked up: the record, the value it must hold, the values found, or the DNS error. */
export interface DnsLookup { name: string; expected: string; found: string[]; error: string | null }
