import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { environmentsQuery } from '../queries.js';
import { Page } from '../ui/page.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';

/** The environment picker: every environment, each leading to its users. */
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
            <li key={environment.id}>
              <Link to="/environments/$environmentId/users" params={{ environmentId: environment.id }}>
                {environment.name}
              </Link>
              <span className="muted"> {environment.frontendHost}</span>
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}
