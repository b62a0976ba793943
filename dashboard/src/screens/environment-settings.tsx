import { useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { adminApi } from '../api/gatehouse.js';
import { Page } from '../ui/page.js';
import { when } from '../ui/settings-secret.js';
import { Loading, ProblemMessage } from '../ui/states.js';
import { SettingsForm } from './settings-form.js';
import { AllowedOrigins, SecretKeys, SigningKeys } from './settings-keys.js';
import { OAuthProviders } from './settings-providers.js';

const route = getRouteApi('/signed-in/environments/$environmentId/settings');

/** The environment's settings (a form generated from their schema), secret keys, allowed origins, OAuth providers and signing keys. */
export function EnvironmentSettingsScreen() {
  const { environmentId } = route.useParams();
  const environment = useQuery({ queryKey: ['environment', environmentId], queryFn: ({ signal }) => adminApi.getEnvironment({ id: environmentId }, { signal }) });
  return (
    <Page title="Environment settings">
      {environment.isPending && <Loading what="the environment" />}
      <ProblemMessage error={environment.error} />
      {environment.data && (
        <>
          <dl className="fields">
            <dt>Name</dt><dd>{environment.data.name}</dd>
            <dt>Frontend host</dt><dd><code>{environment.data.frontendHost}</code></dd>
            <dt>Environment ID</dt><dd><code>{environment.data.id}</code></dd>
            <dt>Created</dt><dd>{when(environment.data.createdAt)}</dd>
          </dl>
          <nav aria-label="On this page" className="settings-toc">
            <ul>
              <li><a href="#settings">Settings</a></li>
              <li><a href="#secret-keys">Secret keys</a></li>
              <li><a href="#allowed-origins">Allowed origins</a></li>
              <li><a href="#oauth-providers">OAuth providers</a></li>
              <li><a href="#signing-keys">Signing keys</a></li>
            </ul>
          </nav>
          <section aria-labelledby="settings">
            <h2 id="settings">Settings</h2>
            <SettingsForm key={environment.data.id} environment={environment.data} />
          </section>
          <SecretKeys environmentId={environmentId} />
          <AllowedOrigins environmentId={environmentId} />
          <OAuthProviders environmentId={environmentId} />
          <SigningKeys environmentId={environmentId} />
        </>
      )}
    </Page>
  );
}
