/**
 * Ajv's errors as a person reads them: one entry per failing field, and a one-line detail that names
 * each field. Enums, constants and unions of literals list their allowed values (`must be one of: en, da`)
 * instead of one "must be equal to constant" per branch. Everything comes from the schemas Ajv reports
 * (its `verbose` errors carry them), so no field has a hand-written message.
 */

/** The part of an Ajv error read here; `schema` is there because the compilers run Ajv with `verbose`. */
export interface AjvError {
  instancePath: string;
  schemaPath: string;
  keyword: string;
  params?: Record<string, unknown>;
  message?: string;
  schema?: unknown;
}

export interface FieldError { path: string; message: string }

const UNIONS = new Set(['anyOf', 'oneOf']);
/** Details name at most this many fields; properties.errors has them all. */
const FIELDS_IN_DETAIL = 5;

/** A value as the message lists it: plain words bare (`en`), anything else as JSON (`"two words"`, `null`). */
const shownValue = (value: unknown) => (typeof value === 'string' && /^[\w.:@/+-]+$/.test(value) ? value : JSON.stringify(value));

const oneOf = (values: unknown[]) => (values.length === 1 ? `must be ${shownValue(values[0])}` : `must be one of: ${values.map(shownValue).join(', ')}`);

/**
 * The values a union branch stands for when it is a literal (`const`, `enum`, the null type, or a union of
 * those, as `NullableInput(Locale)` nests one); undefined otherwise.
 */
function literalValues(branch: unknown): unknown[] | undefined {
  if (typeof branch !== 'object' || branch === null) return undefined;
  const schema = branch as Record<string, unknown>;
  if ('const' in schema) return [schema.const];
  if (Array.isArray(schema.enum)) return schema.enum;
  if (schema.type === 'null') return [null];
  const union = schema.anyOf ?? schema.oneOf;
  if (!Array.isArray(union)) return undefined;
  const values = union.map(literalValues);
  return values.every((v) => v !== undefined) ? values.flat() : undefined;
}

/** A union's one message: the values its literal branches allow, or else what each other branch wants. */
function unionMessage(union: AjvError, branchErrors: AjvError[]): string {
  const branches = Array.isArray(union.schema) ? union.schema : [];
  const literals = branches.map(literalValues);
  // null last: "en, da, null" reads as the choice it is.
  const allowed = literals.flatMap((values) => values ?? []).sort((a, b) => Number(a === null) - Number(b === null));
  const wanted = [...new Set(branchErrors
    .filter((e) => e.instancePath === union.instancePath && literals[branchIndex(union, e)] === undefined)
    .map(messageOf))];
  if (wanted.length === 0) return allowed.length > 0 ? oneOf(allowed) : union.message ?? 'is invalid';
  const alternatives = wanted.join(' or ');
  return allowed.length === 0 ? alternatives : `${alternatives}, or ${oneOf(allowed).replace(/^must /, '')}`;
}

const branchIndex = (union: AjvError, error: AjvError) => Number(error.schemaPath.slice(union.schemaPath.length + 1).split('/')[0]);

function messageOf(error: AjvError): string {
  if (error.keyword === 'enum' && Array.isArray(error.params?.allowedValues)) return oneOf(error.params.allowedValues);
  if (error.keyword === 'const' && error.params && 'allowedValue' in error.params) return oneOf([error.params.allowedValue]);
  return error.message ?? 'is invalid';
}

/** Unknown and missing properties are reported on their parent object: the path names the property itself. */
function pathOf(error: AjvError, part: string) {
  const property = error.params?.additionalProperty ?? error.params?.missingProperty;
  return `/${part}${error.instancePath}${property === undefined ? '' : `/${String(property)}`}`;
}

/** One entry per failing field: a union's branch errors at its own field fold into the union's one message. */
export function fieldErrors(errors: AjvError[], part: string): FieldError[] {
  const unions = errors.filter((e) => UNIONS.has(e.keyword)).sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  const folded = new Map<AjvError, string>();
  const inUnion = new Set<AjvError>();
  for (const union of unions) {
    if (inUnion.has(union)) continue;
    const branchErrors = errors.filter((e) => e !== union && e.schemaPath.startsWith(`${union.schemaPath}/`));
    // Errors deeper inside a branch (a property of an object branch) stay: they name other fields.
    for (const e of branchErrors) if (e.instancePath === union.instancePath) inUnion.add(e);
    folded.set(union, unionMessage(union, branchErrors));
  }
  const entries = errors.filter((e) => !inUnion.has(e))
    .map((e) => ({ path: pathOf(e, part), message: folded.get(e) ?? messageOf(e) }));
  return entries.filter((entry, i) => entries.findIndex((other) => other.path === entry.path && other.message === entry.message) === i);
}

/** `Invalid request body: locale must be one of: en, da; email must match format "email".` */
export function validationDetail(errors: FieldError[], part: string): string {
  const named = errors.slice(0, FIELDS_IN_DETAIL).map(({ path, message }) => {
    const field = path.slice(part.length + 2).replaceAll('/', '.');
    return `${field || part} ${message}`;
  });
  const more = errors.length > FIELDS_IN_DETAIL ? ` (and ${errors.length - FIELDS_IN_DETAIL} more in properties.errors)` : '';
  return `Invalid request ${part}: ${named.join('; ')}${more}.`;
}
