// The lint guards what review should not have to: the dependency rule between platform/ and the domains,
// import cycles, file length, and a few typescript-eslint rules. docs/architecture.md says why each exists.
import { readdirSync } from 'node:fs';
import js from '@eslint/js';
import importPlugin from 'eslint-plugin-import';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// Every top-level folder of src/ other than platform/ is a domain, so a new domain is covered the day it appears.
const domains = readdirSync(new URL('./src/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'platform')
  .map((entry) => entry.name);

// A domain's store and routes, whether one file or a folder split by sub-resource (style.md).
const privateParts = (domain) => ['store.ts', 'store', 'routes.ts', 'routes'].map((part) => `./src/${domain}/${part}`);
const stores = (domain) => [`./src/${domain}/store.ts`, `./src/${domain}/store`];

const boundaryZones = [
  {
    target: './src/platform',
    from: './src',
    except: ['./platform'],
    message: 'platform/ imports only platform/: never a domain, app.ts or config (docs/architecture.md).',
  },
  ...domains.map((domain) => ({
    target: `./src/${domain}`,
    from: domains.filter((other) => other !== domain).flatMap(privateParts),
    message: `${domain}/ may import another domain's service, never its store or routes (docs/architecture.md).`,
  })),
  {
    // The sign-in wing sits above the noun domains: it calls their participants, never the other way round,
    // so a second factor or a new way in changes auth/ alone. The hosted pages sit above the wing (its HTML
    // front, as its routes are its JSON one) and call its services.
    target: domains.filter((domain) => domain !== 'auth' && domain !== 'hosted-pages').map((domain) => `./src/${domain}`),
    from: './src/auth',
    message: 'Only the sign-in wing imports auth/: a noun domain offers a participant taking the transaction, and auth/ calls it (docs/architecture.md).',
  },
  {
    target: './src/*.ts',
    from: domains.flatMap(stores),
    message: 'Only its own domain imports a store; app.ts, main.ts and cli.ts go through services (docs/architecture.md).',
  },
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'coverage/**', 'packages/*/src/generated/**', 'examples/*/dist/**', 'examples/*/.next/**', 'examples/*/next-env.d.ts', 'dashboard/dist/**'] },
  {
    files: ['src/**/*.{ts,tsx}', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'packages/*/src/**/*.{ts,tsx}', 'examples/**/*.{ts,tsx}', 'dashboard/**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    plugins: { import: importPlugin },
    settings: {
      // no-cycle follows imports only into files it may parse: the TypeScript ones.
      'import/extensions': ['.ts', '.tsx', '.js'],
      'import/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      // Resolves the `.js` specifiers NodeNext requires to the `.ts` files beside them.
      'import/resolver': { typescript: { project: './tsconfig.json' } },
    },
    rules: {
      'import/no-cycle': ['error', { ignoreExternal: true }],
      'max-lines': ['error', { max: 400, skipBlankLines: true, skipComments: true }],
      // `const { secret: _secret, ...rest } = row` drops a field on purpose.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // The React binding, the examples' and the dashboard's components follow the rules of hooks.
    files: ['packages/*/src/**/*.tsx', 'examples/**/*.tsx', 'dashboard/src/**/*.tsx'],
    extends: [reactHooks.configs.flat.recommended],
  },
  {
    // Tests read response bodies as `any`, as app.inject's `res.json()` does; src/ stays without `any`.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/**/*.{ts,tsx}'],
    rules: { 'import/no-restricted-paths': ['error', { zones: boundaryZones }] },
  },
);
