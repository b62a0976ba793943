import { requireOption } from './errors.js';
import { createTransport, planeMethods, type TransportOptions } from './transport.js';
import type { PlaneMethods } from './types.js';

type AdminClientBase = Omit<TransportOptions, 'headers' | 'credentials'>;

/** The admin token (a script, the CLI), or the operator's session cookie (a page on Gatehouse's own origin, the dashboard). */
export type AdminClientOptions = AdminClientBase & (
  | {
    /** GATEHOUSE_ADMIN_TOKEN. */
    adminToken: string;
    operatorSession?: undefined;
  }
  | {
    adminToken?: undefined;
    /** Send the browser's operator session cookie instead of a token. */
    operatorSession: true;
  }
);

/**
 * The admin API (`/api/admin/v1`): one method per operation (`listEnvironments`, `createSecretKey`,
 * `rotateSigningKey`, ...), each taking one object of its path parameters, query and body fields.
 */
export function createAdminClient(options: AdminClientOptions) {
  requireOption('createAdminClient', options, 'baseUrl', true);
  if (!options.operatorSession) requireOption('createAdminClient', options, 'adminToken');
  const call = createTransport(options.operatorSession
    ? { ...options, credentials: 'same-origin' }
    : { ...options, headers: () => ({ authorization: `Bearer ${options.adminToken}` }) });
  return planeMethods(call, 'admin') as unknown as PlaneMethods<'admin'>;
}
export type AdminClient = ReturnType<typeof createAdminClient>;
