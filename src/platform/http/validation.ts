import { setImmediate as nextTurn } from 'node:timers/promises';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv, type Options } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
import { isEmailSyntax } from '../email.js';
import { unstorableInput } from './storable-input.js';

// ajv-formats is CommonJS; under ESM its plugin may sit one `default` deeper.
type FormatsPlugin = (ajv: Ajv) => Ajv;
const formats = ajvFormats as unknown as { default: FormatsPlugin | { default: FormatsPlugin } };
const addFormats: FormatsPlugin = typeof formats.default === 'function' ? formats.default : formats.default.default;

/** Schema keyword `x-clamp: [min, max]`: a number outside the range is replaced by the nearest bound instead of refused. */
export const CLAMP_KEYWORD = 'x-clamp';

function addClamp(ajv: Ajv) {
  return ajv.addKeyword({
    keyword: CLAMP_KEYWORD, type: 'number', schemaType: 'array', modifying: true,
    validate: ([min, max]: [number, number], data: number, _schema: unknown, context?: { parentData: Record<string | number, unknown>; parentDataProperty: string | number }) => {
      if (context) context.parentData[context.parentDataProperty] = Math.min(max, Math.max(min, data));
      return true;
    },
  });
}

// `verbose` puts each failing keyword's schema on its error: validation-errors.ts lists a union's allowed values from it.
const common: Options = { removeAdditional: false, useDefaults: true, allErrors: true, strict: false, verbose: true };

interface Validator { (data: unknown): boolean; errors?: FastifySchemaValidationError[] | null }

/**
 * Text the database cannot store, and nesting too deep to process, are refused before the schema is
 * applied, in every part of every route that declares a schema (body, querystring, params, headers): one
 * step at the edge instead of a rule per field. Its errors have Ajv's shape, so they render as every other
 * validation error does.
 */
function refusingUnstorableInput(validate: Validator): Validator {
  const checked: Validator = (data) => {
    const refused = unstorableInput(data);
    if (refused.length > 0) {
      checked.errors = refused;
      return false;
    }
    const valid = validate(data);
    checked.errors = validate.errors;
    return valid;
  };
  return checked;
}

/**
 * Compiling the schemas of a hundred routes (Ajv validators, fast-json-stringify serializers) took about
 * 0.4 s of every start. Each compiles when first used instead, and `app.compileSchemas()` compiles the
 * rest, a schema per event-loop turn, once the server listens.
 */
function compiledOnFirstUse() {
  const pending = new Set<() => unknown>();
  const later = <T>(compile: () => T): (() => T) => {
    let compiled: T | undefined;
    const get = () => {
      if (compiled === undefined) {
        compiled = compile();
        pending.delete(get);
      }
      return compiled;
    };
    pending.add(get);
    return get;
  };
  const compileAll = async () => {
    for (const get of pending) {
      get();
      await nextTurn();
    }
  };
  return { later, compileAll };
}

const lazyValidator = (get: () => Validator): Validator => {
  const validate: Validator = (data) => {
    const compiled = get();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  return validate;
};

/**
 * A `date-time` must also be an instant JavaScript can hold: RFC 3339 allows a leap second
 * (`...T23:59:60Z`), which Date cannot parse, and which would otherwise reach the code as Invalid Date (a 500).
 */
function instantsOnly(ajv: Ajv): Ajv {
  const rfc3339 = ajv.formats['date-time'] as { validate: (value: string) => boolean; compare: (a: string, b: string) => number };
  return ajv.addFormat('date-time', { type: 'string', validate: (value: string) => rfc3339.validate(value) && !Number.isNaN(Date.parse(value)), compare: rfc3339.compare });
}

/** `email` is the service's one email rule (platform/email.ts), which the flows that create users without a schema apply too. */
const withEmailRule = (ajv: Ajv): Ajv => ajv.addFormat('email', { type: 'string', validate: isEmailSyntax });

declare module 'fastify' {
  interface FastifyInstance {
    /** Compiles every schema not compiled yet (they otherwise compile at their route's first request). */
    compileSchemas(): Promise<void>;
  }
}

/**
 * JSON bodies are validated as sent: `{"password": 12345678}` is a number, not a string. Query strings
 * and path parameters arrive as text, so there (and only there) values are coerced to the schema's types.
 */
export function registerSchemaCompilers(app: FastifyInstance) {
  const exact = addClamp(withEmailRule(instantsOnly(addFormats(new Ajv({ ...common, coerceTypes: false })))));
  const coercing = addClamp(withEmailRule(instantsOnly(addFormats(new Ajv({ ...common, coerceTypes: 'array' })))));
  const serializerFor = SerializerSelector()();
  const { later, compileAll } = compiledOnFirstUse();
  app.setValidatorCompiler(({ schema, httpPart }) =>
    refusingUnstorableInput(lazyValidator(later(() => (httpPart === 'body' ? exact : coercing).compile(schema) as Validator))));
  app.setSerializerCompiler((route) => {
    const get = later(() => serializerFor({ ...route, httpStatus: route.httpStatus ?? '' }));
    return (data) => get()(data);
  });
  app.decorate('compileSchemas', compileAll);
}
