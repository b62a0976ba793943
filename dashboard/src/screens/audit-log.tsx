import { Page } from '../ui/page.js';

/** The audit log: filters, the live feed by sequence (being built). */
export function AuditLogScreen() {
  return <Page title="Audit log"><p className="muted">This screen is being built.</p></Page>;
}
