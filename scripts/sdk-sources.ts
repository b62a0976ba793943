/**
 * The SDK's generated files, from the OpenAPI document: `openapi.json` itself, `src/generated/schema.ts`
 * (openapi-typescript) and `src/generated/operations.ts` (for every operation of the Server API, the client
 * plane and the admin API: its method, path, and where each input field goes), so the SDK has one method per operationId.
 * Written by `npm run openapi`; a test checks that the checked-in files match the server.
 */
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

interface Schema { $ref?: string; type?: string; properties?: Record<string, unknown>; additionalProperties?: unknown }
interface Operation { operationId: string; parameters?: { name: string; in: string }[]; requestBody?: { $ref?: string; content?: Record<string, { schema?: Schema }> }; responses?: unknown }
interface Document { paths: Record<string, Record<string, Operation>> }

const PLANES = [['/api/server/v1/', 'server'], ['/_svc/', 'client'], ['/api/admin/v1/', 'admin']] as const;

/** An operation starts a session when one of its answers is a SessionResponse (auth's answerSignIn); the SDK keeps native tokens from those. */
const startsSession = (op: Operation) => JSON.stringify(op.responses ?? {}).includes('"#/components/schemas/SessionResponse"');

/** The object a `$ref` (`#/components/...`) points at, or the object itself. */
function resolved<T extends { $ref?: string }>(doc: Document, node: T): T {
  let current = node;
  while (current.$ref) current = current.$ref.split('/').slice(1).reduce((at, key) => (at as Record<string, never>)[key], doc as unknown) as T;
  return current;
}

/**
 * The names a JSON body may carry, so the SDK refuses any other input key by name; `"any"` when the body's
 * top level takes keys of its own choosing (additionalProperties, or a schema that names none). Free-form
 * objects inside a named field (metadata) are that field's value and are not checked.
 */
function bodyNames(doc: Document, op: Operation): string[] | 'any' | null {
  if (!op.requestBody) return null;
  const schema = resolved(doc, resolved(doc, op.requestBody).content?.['application/json']?.schema ?? {});
  if (!schema.properties || schema.additionalProperties !== false) return 'any';
  return Object.keys(schema.properties);
}

function operationsSource(doc: Document): string {
  const entries: string[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    const plane = PLANES.find(([prefix]) => path.startsWith(prefix))?.[1];
    if (!plane) continue;
    for (const [method, op] of Object.entries(operations)) {
      const names = (where: string) => (op.parameters ?? []).filter((p) => p.in === where).map((p) => p.name);
      entries.push(`  ${op.operationId}: { plane: '${plane}', method: '${method.toUpperCase()}', path: '${path}', pathParams: ${JSON.stringify(names('path'))}, `
        + `query: ${JSON.stringify(names('query'))}, body: ${JSON.stringify(bodyNames(doc, op))}, idempotencyKey: ${names('header').includes('idempotency-key')}, `
        + `startsSession: ${startsSession(op)} },`);
    }
  }
  return `// Generated from openapi.json by npm run openapi (scripts/sdk-sources.ts). Do not edit.
export const OPERATIONS = {
${entries.sort().join('\n')}
} as const;
export type OperationId = keyof typeof OPERATIONS;
`;
}

/**
 * The JSON Schema of an environment's settings, as the admin API validates them (PATCH
 * /api/admin/v1/environments/{id}): what a settings form is generated from (the operator dashboard's is).
 */
function settingsSchemaSource(doc: Document & { components?: { schemas?: Record<string, unknown> } }): string {
  const schema = doc.components?.schemas?.EnvironmentSettings;
  if (!schema || JSON.stringify(schema).includes('"$ref"')) throw new Error('EnvironmentSettings must be a self-contained schema in components.schemas');
  return `// Generated from openapi.json by npm run openapi (scripts/sdk-sources.ts). Do not edit.
/** The JSON Schema of an environment's settings (EnvironmentSettings), as \`updateEnvironment\` validates them; generate a settings form from it. */
export const environmentSettingsSchema = ${JSON.stringify(schema, null, 2)} as const;
`;
}

/** File path (relative to packages/sdk) to content. */
export async function sdkSources(doc: Document): Promise<Record<string, string>> {
  return {
    'openapi.json': `${JSON.stringify(doc, null, 2)}\n`,
    'src/generated/schema.ts': COMMENT_HEADER + astToString(await openapiTS(doc as never, { silent: true })),
    'src/generated/operations.ts': operationsSource(doc),
    'src/generated/settings-schema.ts': settingsSchemaSource(doc),
  };
}
