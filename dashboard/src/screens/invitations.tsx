import { Page } from '../ui/page.js';

/** Environment invitations: list, search, resend, revoke (being built). */
export function InvitationsScreen() {
  return <Page title="Invitations"><p className="muted">This screen is being built.</p></Page>;
}
