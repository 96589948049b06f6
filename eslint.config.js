// Lint rules kept small on purpose: the type checker does most of the work; these catch
// the mistakes it cannot (floating promises in request handlers kill responses silently).
import tseslint from 'typescript-eslint';

/** One no-restricted-imports zone per layer: its files may not import from the folders listed. */
function layers(zones) {
  return Object.entries(zones).map(([files, forbidden]) => ({
    files: [files],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          group: forbidden.map((folder) => `**/${folder}/*`),
          message: `${files.split('/')[1]} may not import from ${forbidden.join(', ')}: the layers point one way (http -> domain -> store; brain -> domain, native).`,
        }],
      }],
    },
  }));
}

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
  // The layers point one way: http -> domain -> store; brain -> domain, native. Each zone names
  // the folders its files may not import; docs/decisions.md says why each edge is where it is.
  ...layers({
    'src/store/**/*.ts': ['domain', 'http', 'brain', 'lines', 'link', 'sim', 'native', 'cli'],
    'src/domain/**/*.ts': ['http', 'brain', 'lines', 'link', 'sim', 'native', 'cli'],
    'src/http/**/*.ts': ['store', 'brain', 'lines', 'link', 'sim', 'native', 'cli'],
    'src/brain/**/*.ts': ['store', 'http', 'sim', 'cli'],
  }),
  // tap's t.test() returns a promise tap itself awaits; tests read untyped JSON answers.
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { 'no-console': 'off', '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-explicit-any': 'off' },
  },
);
