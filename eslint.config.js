// @ts-check
// One lint configuration for every TypeScript workspace (`npm run lint`, run by .ci/run).
// typescript-eslint's type-aware rules need each file's TypeScript program: `project` lists the
// workspaces' tsconfigs by pattern, so a new workspace (apps/checkout-page, packages/checkout,
// bench, examples/*) is linted as soon as it has a tsconfig.json that includes its files, and a
// TypeScript file that no tsconfig includes is an error here instead of going unchecked.
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

// Time is an input (apps/server/src/clock.ts): the server asks its Clock for the time, so a test
// can move time across a rule's edge instead of waiting for it. Only clock.ts reads the wall
// clock; apps/server/test/no-wall-clock.test.ts checks the same thing without ESLint.
const noWallClock = [
  {
    selector: "CallExpression[callee.type='MemberExpression'][callee.object.name='Date'][callee.property.name='now']",
    message: 'Date.now() reads the wall clock: take the time from the Clock (store.clock, ctx.clock, deps; clock.ts).',
  },
  {
    selector: "NewExpression[callee.name='Date'][arguments.length=0]",
    message: 'new Date() reads the wall clock: new Date(clock.nowMs()), or nowIso(clock) (clock.ts).',
  },
];

export default defineConfig(
  globalIgnores([
    '**/node_modules/',
    '**/dist/',
    '**/coverage/',
    '**/test-output/',
    // Generated from /v1/openapi.json (`npm run generate -w packages/sdk`, `npm run gen:api -w
    // apps/backoffice`); their generators are what we would fix, not their output.
    'packages/sdk/src/generated/',
    'apps/backoffice/src/api/schema.d.ts',
    // JavaScript (build scripts, CI scripts, a JavaScript example) has no types to check, and a
    // .d.mts/.d.cts beside it only describes it; this configuration is about the TypeScript
    // workspaces (the bench among them).
    '**/*.js',
    '**/*.mjs',
    '**/*.cjs',
    '**/*.d.mts',
    '**/*.d.cts',
  ]),
  {
    files: ['**/*.{ts,tsx,mts,cts}'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    languageOptions: {
      parserOptions: {
        tsconfigRootDir: import.meta.dirname,
        // bench/ and every workspace (apps/*, packages/*, examples/*); patterns, since a path
        // that does not exist is an error. node_modules is skipped (projectFolderIgnoreList).
        // tsconfig.node.json / tsconfig.test.json: a browser workspace's scripts, tests and vite
        // config, which run on Node. (tsconfig.build.json only narrows tsconfig.json: not listed.)
        project: [
          './*/tsconfig.json',
          './*/*/tsconfig.json',
          './*/*/tsconfig.node.json',
          './*/*/tsconfig.test.json',
        ],
      },
    },
    rules: {
      // The promise rules are the point of linting with types: a promise nobody awaits loses its
      // error (an unhandled rejection ends the process) and its ordering (a write acknowledged
      // before it happened). They are in recommendedTypeChecked; stated here so that they stay
      // errors whatever the preset becomes.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's test()/describe() return a promise that the runner itself awaits and
          // reports; awaiting it at top level would run the tests one file-level await at a time
          // for no gain. Any other promise must be awaited, returned, or marked `void` with a why.
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // Off: Fastify tells promise-style plugins, hooks and handlers from callback-style ones by
      // their returning a promise, and interfaces (a provider's methods, Kysely's migration
      // provider) promise one; `async` without `await` is how such code says so, and it turns a
      // throw into a rejection. Dropping `async` to please the rule would change that behaviour.
      '@typescript-eslint/require-await': 'off',
      // Passing on a caught value as it is (`catch (error) { return Promise.reject(error) }`) is
      // not inventing a non-Error rejection.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A `let` declared before the closures that read it and assigned once after them (a test's
      // app, started once the fake provider that calls it exists) cannot be a `const`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // A leading underscore says "unused on purpose" (a callback's first argument, a value taken
      // out of an object with a rest pattern).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    files: ['apps/server/src/**/*.ts'],
    ignores: ['apps/server/src/clock.ts'],
    rules: {
      'no-restricted-syntax': ['error', ...noWallClock],
    },
  },
  {
    // Route handler types come from the route's TypeBox schemas through the type provider
    // (http/typed.ts: `const app = typed(instance)`), never from generics written beside them,
    // which the validator does not check and which drift from the schemas they restate.
    files: ['apps/server/src/modules/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.type='MemberExpression'][callee.object.name=/^(app|scope|fastify|server)(Instance)?$/][callee.property.name=/^(get|post|put|patch|delete|head|options|all|route)$/] > TSTypeParameterInstantiation.typeArguments",
          message: 'Route types come from the schemas: register on typed(app) (http/typed.ts) and drop the type arguments; a $ref body is refTo(Schema).',
        },
        {
          selector: "TSTypeReference[typeName.name='FastifyRequest'] > TSTypeParameterInstantiation.typeArguments > TSTypeLiteral",
          message: 'A handler\'s request type comes from its route\'s schemas (typed(app), http/typed.ts), not a hand-written FastifyRequest<{ Params; Body; ... }>.',
        },
        // This block's no-restricted-syntax replaces the one above for modules/: repeated here.
        ...noWallClock,
      ],
    },
  },
  {
    // Migrations take `Kysely<any>`, as Kysely's guide says: a migration must keep working when
    // the schema types in the code have moved on, so it must not be typed by them.
    files: ['apps/server/src/store/migrations.ts', 'apps/server/src/store/migrations/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    // Tests read response bodies and documents as `any` (`res.json()`, `JSON.parse`,
    // `Record<string, any>`) and check them with assertions, which is where their shape is
    // verified; typing each one to satisfy these rules would restate the schemas in every test
    // for no added check.
    // bench/ is the same kind of code: it drives a running server and reads its many JSON answers
    // (lists, keys, settlements) only to pass ids on and count results, and its own tests check
    // those; typing each answer would restate the API's schemas in a load script. It gets the
    // tests' exception, and nothing else in it is relaxed.
    files: ['**/test/**/*.{ts,tsx,mts,cts}', 'bench/**/*.{ts,tsx,mts,cts}'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
