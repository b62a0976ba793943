import { parse } from 'scim2-parse-filter';
import { scimPatch, ScimError, type ScimPatchOperation, type ScimResource } from 'scim-patch';
import { ProblemError } from '../platform/http/problem.js';
import { invalidPath, invalidSyntax } from './errors.js';
import { checkOperationTargets, type ResourceType } from './paths.js';
import { memberIds } from './resources.js';

export interface PatchOperation { op: 'add' | 'remove' | 'replace'; path?: string; value?: unknown }
export interface MemberOperation { op: PatchOperation['op']; userIds: string[] }

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The Operations of a PatchOp body (RFC 7644 §3.5.2); `op` in any case, as Entra ID sends "Replace". */
export function patchOperations(body: unknown): PatchOperation[] {
  const operations = isObject(body) ? body.Operations ?? body.operations : undefined;
  if (!Array.isArray(operations) || operations.length === 0) {
    throw invalidSyntax('A PATCH body is {"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"], "Operations": [{"op", "path", "value"}, ...]}.');
  }
  return operations.map((operation) => {
    const op = isObject(operation) && typeof operation.op === 'string' ? operation.op.toLowerCase() : '';
    if (op !== 'add' && op !== 'remove' && op !== 'replace') throw invalidSyntax('Each operation\'s "op" is add, remove or replace.');
    const path = operation.path;
    if (path !== undefined && typeof path !== 'string') throw invalidPath('An operation\'s "path" must be a string.');
    return { op, ...(path !== undefined && { path }), ...('value' in operation && { value: operation.value }) };
  });
}

/**
 * Applies operations with scim-patch to a copy of the resource, once every path and walked key is known to be in
 * the resource's schema (paths.ts); its refusals become SCIM errors with its scimType.
 */
export function applyPatch<T extends object>(type: ResourceType, resource: T, operations: PatchOperation[]): T {
  for (const operation of operations) checkOperationTargets(type, operation);
  try {
    return scimPatch(structuredClone(resource) as unknown as ScimResource, operations as unknown as ScimPatchOperation[]) as unknown as T;
  } catch (err) {
    if (err instanceof ScimError) throw new ProblemError(400, 'invalid_request', err.message || 'The patch cannot be applied.', { scimType: err.scimCode ?? 'invalidValue' });
    throw err;
  }
}

/**
 * The operations on `members` (Entra ID and Okta change groups this way), apart from the rest: `add` with
 * values; `remove` with a `members[value eq "<id>"]` path (parsed by scim2-parse-filter), with values, or with
 * neither (every member); `replace` with the new list.
 */
export function splitMemberOperations(operations: PatchOperation[]) {
  const memberOps: MemberOperation[] = [];
  const otherOps: PatchOperation[] = [];
  for (const operation of operations) {
    const path = operation.path?.trim();
    if (path === undefined && isObject(operation.value) && 'members' in operation.value && operation.op !== 'remove') {
      const { members, ...rest } = operation.value;
      memberOps.push({ op: operation.op, userIds: memberIds(members) });
      if (Object.keys(rest).length) otherOps.push({ ...operation, value: rest });
    } else if (path?.toLowerCase() === 'members') {
      memberOps.push({ op: operation.op, userIds: memberIds(operation.value) });
    } else if (path && /^members\[/i.test(path)) {
      memberOps.push({ op: operation.op, userIds: [memberOfPath(path)] });
    } else {
      otherOps.push(operation);
    }
  }
  return { memberOps, otherOps };
}

/** The user id of a `members[value eq "<id>"]` path. */
function memberOfPath(path: string): string {
  const inner = /^members\[(.*)\]$/i.exec(path)?.[1];
  let filter;
  try {
    filter = inner === undefined ? undefined : parse(inner);
  } catch {
    filter = undefined;
  }
  if (!filter || filter.op !== 'eq' || !('attrPath' in filter) || filter.attrPath.toLowerCase() !== 'value' || typeof filter.compValue !== 'string') {
    throw invalidPath(`Only members[value eq "<User id>"] selects a member; got "${path.slice(0, 200)}".`);
  }
  return memberIds([{ value: filter.compValue }])[0]!;
}
