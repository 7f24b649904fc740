// The linter of every TypeScript and JavaScript file (`npm run lint`, part of `npm test`):
// ESLint's and typescript-eslint's recommended rules, the style left to Prettier
// (.prettierrc.json), and lines of at most 120 characters where Prettier cannot break them
// (comments; strings and templates are left whole, as searching for a message needs them).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import prettier from 'eslint-config-prettier'

export default tseslint.config(
  { ignores: ['**/node_modules/', 'dist/', 'build/', 'coverage/', '.cache/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { ...nodeGlobals() }
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      'no-empty': ['error', { allowEmptyCatch: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }
      ],
      'max-len': [
        'error',
        {
          code: 120,
          ignoreUrls: true,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true
        }
      ]
    }
  },
  // Tests and the load harness read what the services answer as JSON of any shape.
  { files: ['**/test/**', 'test/**', 'benchmarks/**'], rules: { '@typescript-eslint/no-explicit-any': 'off' } },
  // CommonJS on purpose (see the file).
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } }
)

/** Node's globals (the `globals` package would be one more dependency for a list Node itself has). */
function nodeGlobals() {
  const names = Object.getOwnPropertyNames(globalThis).filter((name) => !name.startsWith('_'))
  return Object.fromEntries(
    [...names, 'require', 'module', 'exports', '__dirname', '__filename'].map((name) => [name, 'readonly'])
  )
}
