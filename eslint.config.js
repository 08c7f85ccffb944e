// The linter (docs/adr/0017-formatter-and-linter.md): typescript-eslint's type-aware rules where a
// bug hides (a promise nobody awaits, code nobody uses), file size as a design signal; layout is
// Prettier's (.prettierrc.json), so no stylistic rule is here.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'bench/**/*.d.mts'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Control characters are matched on purpose: log lines and terminal output are escaped with them.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read JSON bodies from fake servers without a type for each; \`any\` is allowed there.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/**/*.ts'],
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] },
  },
);
