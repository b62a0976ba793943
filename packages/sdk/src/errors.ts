/** One field the server refused, as the problem's `properties.errors` lists it. */
export interface FieldError { path: string; message: string }

/**
 * What every SDK call that does not succeed throws. A problem answer (RFC 9457) from Gatehouse: the HTTP
 * `status`, the stable `code` (`user_not_found`, `rate_limited`, ...), the refused fields of a 400, and the
 * seconds to wait before a retry when the answer said so (429, 503). A call that got no answer, or that the
 * SDK refused before sending, has `status` 0 and one of the SDK's own codes (`network_error`, `timeout`,
 * `unknown_input`, `missing_option`, `invalid_option`).
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
    /** What failed underneath (the fetch error of a `network_error`). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }
}

/** An error the SDK raises itself, with no answer from Gatehouse behind it (status 0). */
export const sdkError = (code: string, message: string, cause?: unknown) => new GatehouseError(0, code, message, [], null, null, cause);

function isHttpUrl(text: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol);
  } catch {
    return false;
  }
}

/** The option a client cannot work without, refused at creation rather than by the first call. */
export function requireOption(factory: string, options: object, name: string, isUrl = false): void {
  const value = (options as Record<string, unknown>)[name];
  if (typeof value !== 'string' || value.trim() === '') throw sdkError('missing_option', `${factory}: the \`${name}\` option is missing or empty`);
  if (isUrl && !isHttpUrl(value)) throw sdkError('invalid_option', `${factory}: the \`${name}\` option is not an http(s) URL: ${JSON.stringify(value)}`);
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
