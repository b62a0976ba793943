/**
 * The SDK's generated files, from the OpenAPI document: `openapi.json` itself, `src/generated/schema.ts`
 * (openapi-typescript) and `src/generated/operations.ts` (for every operation of the Server API and the client
 * plane: its method, path, and where each input field goes), so the SDK has one method per operationId.
 * Written by `npm run openapi`; a test checks that the checked-in files match the server.
 */
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

interface Operation { operationId: string; parameters?: { name: string; in: string }[]; requestBody?: unknown; responses?: unknown }
interface Document { paths: Record<string, Record<string, Operation>> }

const PLANES = [['/api/server/v1/', 'server'], ['/_svc/', 'client']] as const;

/** An operation starts a session when one of its answers is a SessionResponse (auth's answerSignIn); the SDK keeps native tokens from those. */
const startsSession = (op: Operation) => JSON.stringify(op.responses ?? {}).includes('"#/components/schemas/SessionResponse"');

function operationsSource(doc: Document): string {
  const entries: string[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    const plane = PLANES.find(([prefix]) => path.startsWith(prefix))?.[1];
    if (!plane) continue;
    for (const [method, op] of Object.entries(operations)) {
      const names = (where: string) => (op.parameters ?? []).filter((p) => p.in === where).map((p) => p.name);
      entries.push(`  ${op.operationId}: { plane: '${plane}', method: '${method.toUpperCase()}', path: '${path}', pathParams: ${JSON.stringify(names('path'))}, `
        + `query: ${JSON.stringify(names('query'))}, body: ${op.requestBody !== undefined}, idempotencyKey: ${names('header').includes('idempotency-key')}, `
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

/** File path (relative to packages/sdk) to content. */
export async function sdkSources(doc: Document): Promise<Record<string, string>> {
  return {
    'openapi.json': `${JSON.stringify(doc, null, 2)}\n`,
    'src/generated/schema.ts': COMMENT_HEADER + astToString(await openapiTS(doc as never, { silent: true })),
    'src/generated/operations.ts': operationsSource(doc),
  };
}
