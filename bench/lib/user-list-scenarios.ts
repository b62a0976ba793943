/**
 * What the users-list bench asks: every filter GET /users and POST /users/search offer, alone and
 * combined, with values from common to unique (the shares follow from bench/lib/seed-user-list.ts).
 */
import type { UserFilter, UserStatus } from '../../src/users/schemas.js';
import { COHORTS, COMPANY_NUMBERS, COMPANY_WORDS, FIRST_NAMES, LAST_NAMES } from './seed-user-list.js';

export interface UserListScenario {
  key: string;
  name: string;
  /** The request as documented (representative value). */
  request: string;
  method: 'GET' | 'POST';
  /** i = 0 is the representative value (EXPLAIN, match count); later ones rotate when `rotates`. */
  filter: (i: number) => UserFilter;
  rotates: boolean;
}

/** Values taken from the seeded data: real users' emails and customer ids, and those in the planner's statistics sample. */
export interface Samples {
  emails: string[];
  customerIds: string[];
  /** Emails of the environment found in pg_stats' histogram of users.email. */
  sampledEmails: string[];
  /** Customer ids found in pg_stats' histogram of users.private_metadata. */
  sampledCustomerIds: string[];
}

const pick = <T>(values: T[], i: number) => values[i === 0 ? 0 : Math.floor(Math.random() * values.length)];
const rand = (n: number) => Math.floor(Math.random() * n);
const statuses = (...s: UserStatus[]) => s;

export function userListScenarios(samples: Samples): UserListScenario[] {
  const scenario = (key: string, name: string, method: 'GET' | 'POST', request: string, filter: (i: number) => UserFilter, rotates = false): UserListScenario =>
    ({ key, name, method, request, filter, rotates });
  const list = [
    scenario('none', 'no filter', 'GET', '`GET /users`', () => ({})),
    scenario('status-active', 'status active (98.9%)', 'GET', '`?status=active`', () => ({ statuses: statuses('active') })),
    scenario('status-banned', 'status banned (1%)', 'GET', '`?status=banned`', () => ({ statuses: statuses('banned') })),
    scenario('status-deleted', 'status deleted (0.1%)', 'GET', '`?status=deleted`', () => ({ statuses: statuses('deleted') })),
    scenario('status-two-rare', 'statuses banned or deleted (1.1%)', 'POST', '`{"statuses":["banned","deleted"]}`', () => ({ statuses: statuses('banned', 'deleted') })),
    scenario('email-provider', 'email: a mail provider (35%)', 'GET', '`?emailSearch=gmail`', () => ({ emailSearch: 'gmail' })),
    scenario('email-company', 'email: a company name (1.9%)', 'GET', '`?emailSearch=globex` (rotates over 20 names)',
      (i) => ({ emailSearch: i === 0 ? 'globex' : pick(COMPANY_WORDS, i) }), true),
    scenario('email-domain', 'email: a company domain (0.01%)', 'GET', '`?emailSearch=globex17.com` (rotates over 4,000 domains)',
      (i) => ({ emailSearch: i === 0 ? 'globex17.com' : `${pick(COMPANY_WORDS, i)}${rand(COMPANY_NUMBERS)}.com` }), true),
    scenario('email-name', 'email: first.last (0.04%)', 'GET', '`?emailSearch=ada.lovelace` (rotates over 2,500 names)',
      (i) => ({ emailSearch: i === 0 ? 'ada.lovelace' : `${pick(FIRST_NAMES, i)}.${pick(LAST_NAMES, i)}` }), true),
    scenario('email-fragment', 'email: a first name and an initial, as typed (0.2%)', 'GET', '`?emailSearch=jean.t` (rotates over names and initials)',
      (i) => ({ emailSearch: i === 0 ? 'jean.t' : `${pick(FIRST_NAMES, i)}.${pick(LAST_NAMES, i)[0]}` }), true),
    scenario('email-address', 'email: a whole address (1 user)', 'GET', '`?emailSearch=<an address>` (rotates over 200 users)',
      (i) => ({ emailSearch: pick(samples.emails, i) }), true),
    scenario('email-sampled', 'email: an address in the statistics sample', 'GET', '`?emailSearch=<an address the planner sampled>`',
      (i) => ({ emailSearch: pick(samples.sampledEmails, i) }), true),
    scenario('email-no-trigram', 'email: one letter that no email has', 'GET', '`?emailSearch=q`', () => ({ emailSearch: 'q' })),
    scenario('public-common', 'public metadata: plan free (60%)', 'POST', '`{"publicMetadata":{"plan":"free"}}`', () => ({ publicMetadata: { plan: 'free' } })),
    scenario('public-medium', 'public metadata: plan enterprise (5%)', 'POST', '`{"publicMetadata":{"plan":"enterprise"}}`', () => ({ publicMetadata: { plan: 'enterprise' } })),
    scenario('public-nested', 'public metadata: nested value (20%)', 'POST', '`{"publicMetadata":{"onboarding":{"completed":false}}}`',
      () => ({ publicMetadata: { onboarding: { completed: false } } })),
    scenario('public-rare', 'public metadata: a beta cohort (0.01%)', 'POST', '`{"publicMetadata":{"cohort":"c-42"}}` (rotates over 100)',
      (i) => ({ publicMetadata: { cohort: `c-${i === 0 ? 42 : rand(COHORTS)}` } }), true),
    scenario('public-recent', 'public metadata: a value only the newest 10% have', 'POST', '`{"publicMetadata":{"app":"v2"}}`', () => ({ publicMetadata: { app: 'v2' } })),
    scenario('private-risk', 'private metadata: risk high (1%)', 'POST', '`{"privateMetadata":{"risk":"high"}}`', () => ({ privateMetadata: { risk: 'high' } })),
    scenario('private-customer', 'private metadata: a customer id (1 user)', 'POST', '`{"privateMetadata":{"stripeCustomerId":"cus_…"}}` (rotates over 200)',
      (i) => ({ privateMetadata: { stripeCustomerId: pick(samples.customerIds, i) } }), true),
    scenario('private-sampled', 'private metadata: a customer id in the statistics sample', 'POST', 'as above, ids the planner sampled',
      (i) => ({ privateMetadata: { stripeCustomerId: pick(samples.sampledCustomerIds, i) } }), true),
    scenario('combo-active-provider', 'status active + email provider (35%)', 'GET', '`?status=active&emailSearch=gmail`',
      () => ({ statuses: statuses('active'), emailSearch: 'gmail' })),
    scenario('combo-banned-company', 'status banned + email company (0.02%)', 'GET', '`?status=banned&emailSearch=globex` (rotates over 20)',
      (i) => ({ statuses: statuses('banned'), emailSearch: i === 0 ? 'globex' : pick(COMPANY_WORDS, i) }), true),
    scenario('combo-deleted-free', 'status deleted + plan free (0.06%)', 'POST', '`{"statuses":["deleted"],"publicMetadata":{"plan":"free"}}`',
      () => ({ statuses: statuses('deleted'), publicMetadata: { plan: 'free' } })),
    scenario('combo-free-cohort', 'plan free + cohort, one bag (0.006%)', 'POST', '`{"publicMetadata":{"plan":"free","cohort":"c-42"}}` (rotates)',
      (i) => ({ publicMetadata: { plan: 'free', cohort: `c-${i === 0 ? 42 : rand(COHORTS)}` } }), true),
    scenario('combo-enterprise-risk', 'plan enterprise + risk high (0.05%)', 'POST', '`{"publicMetadata":{"plan":"enterprise"},"privateMetadata":{"risk":"high"}}`',
      () => ({ publicMetadata: { plan: 'enterprise' }, privateMetadata: { risk: 'high' } })),
  ];
  return list;
}

/** The request path (and body) of a scenario's filter: GET takes emailSearch and status in the query string, POST the filter as body. */
export function requestOf(s: UserListScenario, filter: UserFilter, limit: number, cursor: string | undefined): { path: string; body?: string } {
  const page = `limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
  if (s.method === 'POST') return { path: `/api/server/v1/users/search?${page}`, body: JSON.stringify(filter) };
  const query = [
    ...(filter.emailSearch ? [`emailSearch=${encodeURIComponent(filter.emailSearch)}`] : []),
    ...(filter.statuses ?? []).map((status) => `status=${status}`),
    page,
  ];
  return { path: `/api/server/v1/users?${query.join('&')}` };
}
