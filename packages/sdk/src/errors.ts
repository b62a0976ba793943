/** One field the server refused, as the problem's `properties.errors` lists it. */
export interface FieldError { path: string; message: string }

/**
 * A problem answer (RFC 9457) from Gatehouse, thrown by every SDK call that does not succeed: the HTTP
 * `status`, the stable `code` (`user_not_found`, `rate_limited`, ...), the refused fields of a 400, and the
 * seconds to wait before a retry when the answer said so (429, 503).
 */
export class GatehouseError extends Error {
  readonly name = 'GatehouseError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
    readonly retryAfter: number | null = null,
    /** The request's id in the server log (`urn:uuid:...`), for a support ticket. */
    readonly instance: string | null = null,
  ) {
    super(message);
  }
}

interface ProblemBody { title?: string; detail?: string; instance?: string; properties?: { code?: string; errors?: FieldError[] } }

/** The error of a failed answer (its body already read): its problem document when it has one, else what the status says. */
export function errorFromResponse(response: Response, body: unknown): GatehouseError {
  const retryAfter = Number(response.headers.get('retry-after'));
  // openapi-fetch hands over the parsed problem document, or the text of anything that is not JSON (a proxy's page).
  const problem: ProblemBody = typeof body === 'object' && body !== null ? body as ProblemBody : {};
  const text = typeof body === 'string' ? body : '';
  return new GatehouseError(
    response.status, problem.properties?.code ?? `http_${response.status}`, problem.detail ?? problem.title ?? (text.slice(0, 200) || response.statusText),
    problem.properties?.errors ?? [], Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null, problem.instance ?? null,
  );
}
