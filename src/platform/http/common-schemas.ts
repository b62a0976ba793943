import { Type, type Static, type TSchema } from 'typebox';
import { EMAIL_LENGTH } from '../email.js';
import { CLAMP_KEYWORD } from './validation.js';

export const Uuid = Type.String({ format: 'uuid' });
export const DateTime = Type.String({ format: 'date-time' });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
/**
 * "This or null" for request bodies without Ajv's type coercion in the way. With `type: 'null'`, coercion
 * turns "" or false into null, so `{"emailSearch": ""}` would silently mean "no filter". Null is matched by
 * value, and first: a string branch tried first would coerce null into "".
 */
const StrictNull = Type.Unsafe<null>({ const: null } as TSchema);
export const NullableInput = <T extends TSchema>(schema: T) => Type.Union([StrictNull, schema]);

/** An email a user may have: `isAcceptableEmail` (platform/email.ts) as a schema. */
export const Email = Type.String({ format: 'email', minLength: EMAIL_LENGTH.min, maxLength: EMAIL_LENGTH.max });
/** A free-form JSON object (metadata bags); its type is platform/json's JsonObject. */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const PAGE_SIZE = { min: 1, max: 100, default: 20 };

/**
 * A keyset page query. A `limit` outside 1 to 100 is refused by default (invitation search); lists that
 * clamp it instead (organizations, members) take `pageQuery({ outOfRange: 'clamp' })`.
 */
export const pageQuery = ({ outOfRange = 'reject' }: { outOfRange?: 'reject' | 'clamp' } = {}) => Type.Object({
  limit: outOfRange === 'reject'
    ? Type.Integer({ minimum: PAGE_SIZE.min, maximum: PAGE_SIZE.max, default: PAGE_SIZE.default, description: 'Page size, 1 to 100.' })
    : Type.Integer({ [CLAMP_KEYWORD]: [PAGE_SIZE.min, PAGE_SIZE.max], default: PAGE_SIZE.default, description: 'Page size; a value outside 1 to 100 is taken as the nearest bound.' }),
  cursor: Type.Optional(Type.String({ format: 'uuid', description: "The previous page's nextCursor." })),
}, { additionalProperties: false });
export const PageQuery = pageQuery();
export type PageQuery = Static<typeof PageQuery>;

export const Page = <T extends TSchema>(item: T) => Type.Object({
  items: Type.Array(item),
  nextCursor: Nullable(Uuid),
  hasMore: Type.Boolean(),
}, { description: 'A page of the list: `items`, and while `hasMore` the `nextCursor` to pass as `cursor` for the next page.' });
export interface Page<T> { items: T[]; nextCursor: string | null; hasMore: boolean }

export const NoContent = Type.Null({ description: 'No content' });

/** Ends a request with 204 and no body. */
export function noContent(reply: { code(status: number): { send(payload: null): unknown } }): void {
  reply.code(204).send(null);
}

/** The RFC 9457 body of every error; `properties.code` is the stable machine-readable code. */
export const Problem = Type.Object({
  type: Type.String({ description: 'urn:gatehouse:problem:<code>' }),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  instance: Type.String({ description: 'urn:uuid:<request id>, also in the server log line' }),
  properties: Type.Object({
    code: Type.String({ description: 'Stable snake_case error code, e.g. user_not_found' }),
    errors: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }))),
  }, { additionalProperties: true }),
}, {
  title: 'Problem', description: 'application/problem+json',
  examples: [{
    type: 'urn:gatehouse:problem:user_not_found', title: 'Not Found', status: 404, detail: 'No user with this id in this environment.',
    instance: 'urn:uuid:8f14e45f-ceea-467f-a0e6-3c1f7b2d9a10', properties: { code: 'user_not_found' },
  }],
});
