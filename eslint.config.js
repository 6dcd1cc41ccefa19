// Lint budget: small functions, no floating promises (a dropped promise is a lost effect).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'load-tests/k6/**', '**/*.d.ts', '.brokkr/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      complexity: ['error', 12],
      'max-depth': ['error', 3],
      'max-params': ['error', 4],
      'max-lines': ['warn', { max: 400, skipBlankLines: true, skipComments: true }],
      // docs/adr/0036-function-size-budget.md: a function that needs more is split into named parts.
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      'max-statements': ['error', 40],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The operator console: plain ES modules that run in the browser (services/api/console/).
    files: ['services/api/console/**/*.js'],
    languageOptions: {
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'sessionStorage',
          'localStorage',
          'fetch',
          'setTimeout',
          'clearTimeout',
          'setInterval',
          'clearInterval',
          'addEventListener',
          'removeEventListener',
          'URLSearchParams',
          'TextDecoderStream',
          'AbortController',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    // Plain Node scripts (the CLI's launcher and its bundler).
    files: ['tools/cli/bin/**/*.js', 'tools/cli/scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', URL: 'readonly', console: 'readonly' } },
  },
  {
    files: ['**/test/**/*.ts', '**/*.test.ts'],
    // A test reads as one story (given, when, then): its length is not a design smell.
    rules: {
      '@typescript-eslint/no-unused-expressions': 'off',
      'max-lines': 'off',
      'max-lines-per-function': 'off',
      'max-statements': 'off',
    },
  },
);
