import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**'] },
  js.configs.recommended,
  {
    files: ['src/**/*.ts'],
    extends: [...tseslint.configs.recommended],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      eqeqeq: 'error',
    },
  },
  {
    // the settings-table script and the end-to-end drivers run on plain Node
    files: ['scripts/**/*.mjs', 'e2e/**/*.js', 'esbuild.mjs', 'eslint.config.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable',
                 exports: 'writable', __dirname: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly',
                 URL: 'readonly', Buffer: 'readonly', window: 'readonly', document: 'readonly' },
    },
  },
);
