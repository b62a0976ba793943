import { requireOption } from './errors.js';
import { createTransport, planeMethods, type TransportOptions } from './transport.js';
import type { operations } from './generated/schema.js';
import type { CallOptions, Input, Output, PlaneMethods } from './types.js';

type ServerClientBase = Omit<TransportOptions, 'headers' | 'credentials'>;

/** The header naming the environment a Server API call made with an operator's session acts in. */
export const ENVIRONMENT_HEADER = 'Gatehouse-Environment';

/**
 * Either the environment's secret key, or (a page on Gatehouse's own origin, the operator dashboard) the
 * signed-in operator's HttpOnly session cookie and the id of the environment to act in.
 */
export type ServerClientOptions = ServerClientBase & (
  | {
    /** The environment's secret key (sk_...). Keep it on your backend. */
    secretKey: string;
    operator?: undefined;
  }
  | {
    secretKey?: undefined;
    /** Act as the operator whose session cookie the browser holds, in this environment (sent as `Gatehouse-Environment`). */
    operator: { environmentId: string };
  }
);

/** The list operations that page with `cursor`, `nextCursor` and `hasMore`. */
type Paginated = { [K in keyof operations]: Output<K> extends { items: unknown[]; nextCursor: string | null; hasMore: boolean }
  ? 'cursor' extends keyof Input<K> ? K : never : never }[keyof operations];
type ItemOf<K extends Paginated> = Output<K> extends { items: (infer T)[] } ? T : never;

/**
 * The Server API: one method per operation (`createUser`, `getUser`, `listUsers`, `appendAuditEvent`, ...),
 * each taking one object of its path parameters, query and body fields. `paginate` walks every page of a list.
 */
export function createServerClient(options: ServerClientOptions) {
  requireOption('createServerClient', options, 'baseUrl', true);
  const { operator } = options;
  if (operator) requireOption('createServerClient', operator, 'environmentId');
  else requireOption('createServerClient', options, 'secretKey');
  const call = createTransport(operator
    ? { ...options, credentials: 'same-origin', headers: () => ({ [ENVIRONMENT_HEADER]: operator.environmentId }) }
    : { ...options, headers: () => ({ authorization: `Bearer ${options.secretKey}` }) });
  const methods = planeMethods(call, 'server') as unknown as PlaneMethods<'server'>;
  return {
    ...methods,
    /** Every item of a cursor-paginated list, page after page (`for await (const user of gh.paginate('listUsers'))`). */
    async *paginate<K extends Paginated & keyof PlaneMethods<'server'>>(operation: K, input?: Omit<Input<K>, 'cursor'>, options?: CallOptions): AsyncGenerator<ItemOf<K>> {
      let cursor: string | undefined;
      do {
        const page = await call(operation, { ...input, ...(cursor && { cursor }) }, options) as { items: ItemOf<K>[]; nextCursor: string | null; hasMore: boolean };
        yield* page.items;
        cursor = page.hasMore && page.nextCursor ? page.nextCursor : undefined;
      } while (cursor);
    },
  };
}
export type ServerClient = ReturnType<typeof createServerClient>;
