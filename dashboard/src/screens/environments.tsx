import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { adminApi, GatehouseError } from '../api/gatehouse.js';
import { environmentsQuery } from '../queries.js';
import { Page } from '../ui/page.js';
import { SecretOnce } from '../ui/settings-secret.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';

/** The environment picker: every environment, each leading to its users and its settings; and a new one, its first key shown once. */
export function EnvironmentsScreen() {
  const environments = useQuery(environmentsQuery);
  return (
    <Page title="Environments">
      {environments.isPending && <Loading what="environments" />}
      <ProblemMessage error={environments.error} />
      {environments.data?.length === 0 && <Empty>There are no environments yet.</Empty>}
      {environments.data && environments.data.length > 0 && (
        <ul className="cards">
          {environments.data.map((environment) => (
            <li key={environment.id} className="environment-card">
              <Link to="/environments/$environmentId/users" params={{ environmentId: environment.id }}>
                {environment.name}
              </Link>
              <span className="muted"> {environment.frontendHost}</span>
              <span className="environment-links">
                <Link to="/environments/$environmentId/users" params={{ environmentId: environment.id }}>Users<span className="visually-hidden"> of {environment.name}</span></Link>
                <Link to="/environments/$environmentId/settings" params={{ environmentId: environment.id }}>Settings<span className="visually-hidden"> of {environment.name}</span></Link>
              </span>
            </li>
          ))}
        </ul>
      )}
      <CreateEnvironment />
    </Page>
  );
}

function CreateEnvironment() {
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [frontendHost, setFrontendHost] = useState('');
  const create = useMutation({
    mutationFn: () => adminApi.createEnvironment({ name: name.trim(), ...(frontendHost.trim() && { frontendHost: frontendHost.trim() }) }),
    onSuccess: async () => {
      setName('');
      setFrontendHost('');
      await queryClient.invalidateQueries({ queryKey: environmentsQuery.queryKey });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => { event.preventDefault(); create.mutate(); };
  const errors = new Map(create.error instanceof GatehouseError ? create.error.errors.map((e) => [e.path.replace(/^\/body\//, ''), e.message]) : []);
  const created = create.data;
  return (
    <section aria-labelledby="create-environment">
      <h2 id="create-environment">Create environment</h2>
      <form className="stack create-environment" onSubmit={onSubmit} noValidate>
        <label htmlFor="environment-name">Name</label>
        <input id="environment-name" value={name} onChange={(event) => setName(event.target.value)} required maxLength={100}
          aria-invalid={errors.has('name') ? true : undefined} aria-describedby={errors.has('name') ? 'environment-name-error' : undefined} />
        {errors.has('name') && <p id="environment-name-error" className="field-error">Name: {errors.get('name')}</p>}
        <label htmlFor="environment-host">Frontend host (optional)</label>
        <input id="environment-host" value={frontendHost} onChange={(event) => setFrontendHost(event.target.value)} placeholder="auth.example.com"
          aria-describedby={errors.has('frontendHost') ? 'environment-host-help environment-host-error' : 'environment-host-help'} aria-invalid={errors.has('frontendHost') ? true : undefined} />
        <p id="environment-host-help" className="help">Where its sign-in pages and client plane live. Empty gives it a name.localhost host for development.</p>
        {errors.has('frontendHost') && <p id="environment-host-error" className="field-error">Frontend host: {errors.get('frontendHost')}</p>}
        <button type="submit" className="primary" disabled={create.isPending}>{create.isPending ? 'Creating…' : 'Create environment'}</button>
      </form>
      <ProblemMessage error={create.error} />
      {created && (
        <>
          <p role="status">
            {created.name} is created.{' '}
            <Link to="/environments/$environmentId/settings" params={{ environmentId: created.id }}>Open its settings</Link>
          </p>
          <SecretOnce label={`Secret key of ${created.name}`} secret={created.secretKey} onDone={() => create.reset()} />
        </>
      )}
    </section>
  );
}
