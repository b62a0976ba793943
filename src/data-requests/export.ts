import type { Db } from '../platform/db/database.js';
import { createExportStore, type ExportStore } from './export-store.js';

/** What a section reads: the user, and the emails invitations to them were addressed to. */
export interface ExportSubject { environmentId: string; userId: string; emails: string[] }

export interface ExportSection { name: string; gather(store: ExportStore, subject: ExportSubject): Promise<unknown> }

/**
 * The archive's sections, in order: a new kind of personal data is one more line here and one read
 * in export-store.ts.
 */
export const EXPORT_SECTIONS: ExportSection[] = [
  { name: 'user', gather: (store, s) => store.user(s.environmentId, s.userId) },
  { name: 'emailAddresses', gather: (store, s) => store.emailAddresses(s.environmentId, s.userId) },
  { name: 'secondFactors', gather: (store, s) => store.secondFactors(s.environmentId, s.userId) },
  { name: 'passkeys', gather: (store, s) => store.passkeys(s.environmentId, s.userId) },
  { name: 'sessions', gather: (store, s) => store.sessions(s.environmentId, s.userId) },
  { name: 'identities', gather: (store, s) => store.identities(s.environmentId, s.userId) },
  { name: 'memberships', gather: (store, s) => store.memberships(s.environmentId, s.userId) },
  { name: 'invitations', gather: (store, s) => store.invitations(s.environmentId, s.userId, s.emails) },
  { name: 'organizationInvitations', gather: (store, s) => store.organizationInvitations(s.environmentId, s.userId, s.emails) },
  { name: 'auditEvents', gather: (store, s) => store.auditEvents(s.environmentId, s.userId) },
  { name: 'dataRequests', gather: (store, s) => store.dataRequests(s.environmentId, s.userId) },
];

/** Every section about the user, read in the job's transaction; JSON-ready (dates become ISO strings when stored). */
export async function gatherSections(trx: Db, environmentId: string, userId: string): Promise<Record<string, unknown>> {
  const store = createExportStore(trx);
  const subject = { environmentId, userId, emails: await store.emailsOf(environmentId, userId) };
  const sections: Record<string, unknown> = {};
  // One after another: they share the transaction's connection.
  for (const section of EXPORT_SECTIONS) sections[section.name] = await section.gather(store, subject);
  return JSON.parse(JSON.stringify(sections)) as Record<string, unknown>;
}
