/**
 * Gives the OpenAPI document named component schemas: every schema with a `title` (TypeBox's option, set on
 * the shapes a client works with: User, Invitation, Problem, ...) moves to `components.schemas.<title>` and
 * is referenced where it was inlined, so generated clients get one named type instead of many anonymous copies.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Replaces titled schemas under `node` with references, collecting their definitions (children first). */
function hoist(node: unknown, components: Map<string, { json: string; schema: Json }>): unknown {
  if (Array.isArray(node)) return node.map((item) => hoist(item, components));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = key === 'example' || key === 'examples' ? value : hoist(value, components);
  const title = out.title;
  const isSchema = typeof title === 'string' && ('type' in out || 'anyOf' in out || 'oneOf' in out || 'allOf' in out || 'properties' in out);
  if (!isSchema) return out;
  // A use may describe the schema in its own words (the description of a response), and the document
  // generator moves a response's examples to its media type: neither makes it another schema.
  const { description, examples, example: _example, ...shape } = out;
  const json = JSON.stringify(shape);
  const known = components.get(title);
  if (known && known.json !== json) throw new Error(`two different schemas are titled "${title}"`);
  if (!known) components.set(title, { json, schema: out });
  else if (examples !== undefined && known.schema.examples === undefined) known.schema.examples = examples;
  const ref = { $ref: `#/components/schemas/${title}` };
  return description === undefined || description === components.get(title)!.schema.description ? ref : { ...ref, description };
}

/**
 * A request field with a default is one the client may leave out (validation fills it in), though the route
 * schema lists it as required: the document says it is optional, in query parameters and request bodies.
 */
function defaultsOptional(node: unknown, inRequest = false): unknown {
  if (Array.isArray(node)) return node.map((item) => defaultsOptional(item, inRequest));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = defaultsOptional(value, inRequest || key === 'requestBody' || key === 'parameters');
  if (!inRequest) return out;
  if (out.in === 'query' && isObject(out.schema) && out.schema.default !== undefined) out.required = false;
  if (Array.isArray(out.required) && isObject(out.properties)) {
    const properties = out.properties;
    out.required = out.required.filter((name) => !(isObject(properties[name as string]) && (properties[name as string] as Json).default !== undefined));
    if ((out.required as unknown[]).length === 0) delete out.required;
  }
  return out;
}

/** The document with its titled schemas as components (the paths' copies replaced by references). */
export function withNamedSchemas<T extends { paths?: unknown; components?: { schemas?: Json } }>(document: T): T {
  const components = new Map<string, { json: string; schema: Json }>();
  const paths = hoist(defaultsOptional(document.paths), components);
  const schemas = Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b)).map(([name, { schema }]) => [name, schema]));
  return { ...document, paths, components: { ...document.components, schemas: { ...document.components?.schemas, ...schemas } } };
}
