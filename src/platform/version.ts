import { readFileSync } from 'node:fs';

/** The package's version (package.json), shown in the API reference and the OpenAPI document. */
export const PACKAGE_VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
