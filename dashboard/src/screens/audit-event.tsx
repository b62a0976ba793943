import { Page } from '../ui/page.js';

/** One audit event (being built). */
export function AuditEventScreen() {
  return <Page title="Audit event"><p className="muted">This screen is being built.</p></Page>;
}
