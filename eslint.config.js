// Lint rules kept small on purpose: the type checker does most of the work; these catch
// the mistakes it cannot (floating promises in request handlers kill responses silently).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'native/build/**', 'node_modules/**', 'coverage/**', '.tap/**', 'tmp-me/**', 'scratch/**'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'error',
    },
  },
  // tap's t.test() returns a promise tap itself awaits; tests read untyped JSON answers.
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);
