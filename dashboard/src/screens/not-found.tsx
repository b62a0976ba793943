import { Link } from '@tanstack/react-router';
import { Page } from '../ui/page.js';

export function NotFoundScreen() {
  return (
    <main id="main">
      <Page title="Page not found">
        <p>There is no such screen in the dashboard.</p>
        <p><Link to="/environments">Go to the environments</Link></p>
      </Page>
    </main>
  );
}
