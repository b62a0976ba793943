import { Ajv, type Options } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify';
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

const common: Options = { removeAdditional: false, useDefaults: true, allErrors: true, strict: false };

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
 * JSON bodies are validated as sent: `{"password": 12345678}` is a number, not a string. Query strings
 * and path parameters arrive as text, so there (and only there) values are coerced to the schema's types.
 */
export function registerValidators(app: FastifyInstance) {
  const exact = addClamp(addFormats(new Ajv({ ...common, coerceTypes: false })));
  const coercing = addClamp(addFormats(new Ajv({ ...common, coerceTypes: 'array' })));
  app.setValidatorCompiler(({ schema, httpPart }) => refusingUnstorableInput((httpPart === 'body' ? exact : coercing).compile(schema)));
}
