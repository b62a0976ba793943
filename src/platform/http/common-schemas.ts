import { Type, type Static, type TSchema } from 'typebox';

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

export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 320 });
/** A free-form JSON object (metadata bags). */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());
export type JsonObject = Static<typeof JsonObject>;

export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100.' }),
  cursor: Type.Optional(Type.String({ format: 'uuid', description: "The previous page's nextCursor." })),
}, { additionalProperties: false });
export type PageQuery = Static<typeof PageQuery>;

export const Page = <T extends TSchema>(item: T) => Type.Object({
  items: Type.Array(item),
  nextCursor: Nullable(Uuid),
  hasMore: Type.Boolean(),
});
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
}, { title: 'Problem', description: 'application/problem+json' });
