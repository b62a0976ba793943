import type { operations } from './generated/schema.js';
import type { OPERATIONS } from './generated/operations.js';

/** `{}` for `never` or an absent part, the part itself otherwise. */
type Part<T> = [T] extends [never] ? unknown : [T] extends [undefined] ? unknown : NonNullable<T>;
type ParamsOf<O> = O extends { parameters: infer P }
  ? Part<P extends { path?: infer X } ? X : never> & Part<P extends { query?: infer Q } ? Q : never>
  : unknown;
type BodyOf<O> = O extends { requestBody: { content: { 'application/json': infer B } } } ? B
  : O extends { requestBody?: { content: { 'application/json': infer B } } } ? Partial<B> : unknown;

/** What an operation takes, as one flat object: its path parameters, its query and its JSON body together. */
export type Input<K extends keyof operations> = ParamsOf<operations[K]> & BodyOf<operations[K]>;

type Json<R> = R extends { content: { 'application/json': infer D } } ? D : undefined;
/** What an operation answers on success (undefined for a 204; a 202's body for work accepted to run later). */
export type Output<K extends keyof operations> = operations[K] extends { responses: infer R }
  ? 200 extends keyof R ? Json<R[200]> : 201 extends keyof R ? Json<R[201]> : 202 extends keyof R ? Json<R[202]> : undefined
  : never;

/** Per call: an abort signal, extra headers, a time limit per attempt, and the audit append's own idempotency key. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  headers?: Record<string, string> | undefined;
  /** Overrides the client's `timeoutMs` for this call. */
  timeoutMs?: number | undefined;
  idempotencyKey?: string | undefined;
}

/** Fetch's `credentials` (spelt out, so the types need no DOM library). */
export type Credentials = 'include' | 'omit' | 'same-origin';

/** Whether every field of T is optional (then the method's input is too). */
type AllOptional<T> = Record<string, never> extends T ? true : false;

/** One method per operation of a plane: optional input when nothing in it is required. */
export type PlaneMethods<Plane extends 'server' | 'client' | 'admin'> = {
  [K in keyof typeof OPERATIONS as (typeof OPERATIONS)[K]['plane'] extends Plane ? K : never]: K extends keyof operations
    ? (AllOptional<Input<K>> extends true ? (input?: Input<K>, options?: CallOptions) => Promise<Output<K>> : (input: Input<K>, options?: CallOptions) => Promise<Output<K>>)
    : never;
};

export type { components } from './generated/schema.js';
