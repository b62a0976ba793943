import { describe, expect, it } from 'vitest';
import { fieldErrors, validationDetail } from '../../src/platform/http/validation-errors.js';

describe('validation errors as fields and one line', () => {
  it('lists the one value a const allows', () => {
    const errors = fieldErrors([{ instancePath: '/version', schemaPath: '#/properties/version/const', keyword: 'const', params: { allowedValue: 1 }, message: 'must be equal to constant', schema: 1 }], 'body');
    expect(errors).toEqual([{ path: '/body/version', message: 'must be 1' }]);
  });

  it('quotes allowed values that are not plain words', () => {
    const errors = fieldErrors([{ instancePath: '/mode', schemaPath: '#/properties/mode/enum', keyword: 'enum', params: { allowedValues: ['two words', 'x,y', 'plain'] }, schema: ['two words', 'x,y', 'plain'] }], 'body');
    expect(errors).toEqual([{ path: '/body/mode', message: 'must be one of: "two words", "x,y", plain' }]);
  });

  it('folds a oneOf of literals into one entry', () => {
    const union = { instancePath: '/side', schemaPath: '#/properties/side/oneOf', keyword: 'oneOf', params: {}, message: 'must match exactly one schema in oneOf', schema: [{ const: 'left' }, { const: 'right' }] };
    const errors = fieldErrors([
      { instancePath: '/side', schemaPath: '#/properties/side/oneOf/0/const', keyword: 'const', params: { allowedValue: 'left' }, schema: 'left' },
      { instancePath: '/side', schemaPath: '#/properties/side/oneOf/1/const', keyword: 'const', params: { allowedValue: 'right' }, schema: 'right' },
      union,
    ], 'body');
    expect(errors).toEqual([{ path: '/body/side', message: 'must be one of: left, right' }]);
  });

  it('names the part itself for an error at its root, and counts the fields beyond five', () => {
    expect(validationDetail([{ path: '/body', message: 'must be object' }], 'body')).toBe('Invalid request body: body must be object.');
    const many = Array.from({ length: 7 }, (_, i) => ({ path: `/body/f${i}`, message: 'must be string' }));
    expect(validationDetail(many, 'body')).toBe('Invalid request body: f0 must be string; f1 must be string; f2 must be string; f3 must be string; f4 must be string (and 2 more in properties.errors).');
  });
});
