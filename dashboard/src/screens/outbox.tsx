import { Page } from '../ui/page.js';

/** The development mail outbox (being built). */
export function OutboxScreen() {
  return <Page title="Mail outbox"><p className="muted">This screen is being built.</p></Page>;
}
