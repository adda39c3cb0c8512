// ESLint for the whole repository: typescript-eslint with type information (the rules that
// catch a forgotten `await` need it), import cycles forbidden, formatting left to Prettier.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // test/packaging/newcomer: a project as `nest new` makes it, with its own linter config.
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'coverage/**',
      'bench/results/**',
      '.test-servers/**',
      'test/packaging/newcomer/**',
    ],
  },
  js.configs.recommended,
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      // Without these, import-x reads only .js files for what they import, so no-cycle never
      // follows a TypeScript import and reports nothing (importX.flatConfigs.typescript sets the same).
      'import-x/extensions': ['.ts', '.js', '.mjs', '.cjs'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      // A promise nobody awaits is a lost error, or a statement that runs after its transaction.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-import-type-side-effects': 'error',
      // The one cycle checker of the repository: a cycle of value imports is an error (import-x
      // leaves out `import type`, which TypeScript erases).
      'import-x/no-cycle': 'error',
      'import-x/no-self-import': 'error',
      // Class references (decorator targets, injection tokens) are `Function`, as in Nest's own types.
      '@typescript-eslint/no-unsafe-function-type': 'off',
      // Drivers' and Nest's own types are `any` in places; the boundary code says so explicitly.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  prettier,
);
