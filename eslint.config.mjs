// ESLint looks for bugs; Prettier (prettier.config.js) owns layout, and eslint-config-prettier
// switches off every rule that would argue with it. `npm run lint` runs both, `npm run format`
// applies ESLint's fixes and then Prettier. A rule turned off or softened below says why.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['**/node_modules/', '**/dist/', 'coverage/', 'bench/results/', '.data/', 'test-results/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        // A leading underscore marks a value left unused on purpose (`const { http: _http, ...rest } = x`).
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      // A variable assigned once but read first by a closure (a timer its own callback clears) must stay `let`.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // The code matches control characters on purpose, to strip or reject them (NUL cannot be stored).
      'no-control-regex': 'off',
      // Flags defensive initialisers such as `let ok = false` before a try; TypeScript's definite-assignment checks cover the real bug.
      'no-useless-assignment': 'off',
      // Boundaries rethrow a generic error after logging the cause; attaching the cause is not wanted there.
      'preserve-caught-error': 'off',
      // An escape that changes nothing (`[a-z.\-]`) is harmless and often reads clearer; no auto-fix exists.
      'no-useless-escape': 'off',
      // `if (x) (a.push(y), b.push(z))` is used on purpose; TypeScript reports comma operands without side effects.
      '@typescript-eslint/no-unused-expressions': 'off',
      // The project compiles to CommonJS: an inline require() loads a module lazily, or inside a worker's or a page's source.
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // Type-aware rules: the few that catch real bugs (a promise nobody awaits), for the cost of one type-check.
    files: ['**/*.{ts,tsx,mts,cts}'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      // Async handlers (`onSubmit={async () => …}`, `req.on('end', async () => …)`) are the usual idiom and catch their own errors.
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false, arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-for-in-array': 'error',
      // `any` marks a boundary with untyped data (a driver's result, a JSON message); visible, not fatal.
      '@typescript-eslint/no-explicit-any': 'warn',
    },
  },
  {
    // Browser UI code lets some promises go on purpose (a socket closing, a refresh started from a handler): shown, not fatal.
    files: ['web/**/*.{ts,tsx}'],
    rules: { '@typescript-eslint/no-floating-promises': 'warn' },
  },
  {
    // Tests and benchmarks read arbitrary JSON answers; `any` there is the honest type.
    files: ['test/**/*.ts', 'packages/*/test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module', globals: { ...globals.node } },
  },
  {
    // The pages' own scripts run in the browser as classic scripts, beside libraries that the
    // page loads first and that leave a global behind (node-forge, GraphiQL and its React).
    files: ['src/**/public/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: { ...globals.browser, forge: 'readonly', GraphiQL: 'readonly', React: 'readonly', ReactDOM: 'readonly', graphqlWs: 'readonly' },
    },
  },
  prettier,
);
