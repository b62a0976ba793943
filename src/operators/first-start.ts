import { createEnvironmentsService } from '../environments/service.js';
import { systemClock } from '../platform/clock.js';
import type { Db } from '../platform/db/database.js';
import { createSessionsService } from '../sessions/service.js';
import { createUsersService } from '../users/service.js';
import { createOperatorAccounts, type OperatorAccounts } from './service.js';

/** The exact command that creates the first operator, as the first start prints it. */
export const FIRST_OPERATOR_COMMAND = 'npx gatehouse operators create --email you@example.com';

/** What a start prints while no operator exists (nobody can sign in to the dashboard yet); undefined once one does. */
export async function firstOperatorStep(accounts: Pick<OperatorAccounts, 'anyExists'>, baseUrl: string): Promise<string | undefined> {
  if (await accounts.anyExists()) return undefined;
  return [
    'No operator can sign in to the dashboard yet. Create the first one; it prints a one-time link to set the password:',
    `  ${FIRST_OPERATOR_COMMAND}`,
    `  (or add --password; then sign in at ${baseUrl}/dashboard)`,
    '',
  ].join('\n');
}

/** The operators' accounts over a database, outside the app (the start asks whether the first one is still to be made). */
export function operatorAccountsOver(db: Db, defaultFrontendPort: number): OperatorAccounts {
  const environments = createEnvironmentsService({ db, clock: systemClock, defaultFrontendPort });
  const users = createUsersService({ db, clock: systemClock, environments, sessions: createSessionsService({ db, clock: systemClock }) });
  return createOperatorAccounts({ db, clock: systemClock, environments, users });
}
