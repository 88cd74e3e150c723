// Lint is about structure: apps never import other apps, libraries never import apps, and every import
// between projects goes through a library's public entry point. Style is Prettier's (.prettierrc.json),
// checked here so a file that is not formatted fails lint like any other rule.
const nx = require('@nx/eslint-plugin');
const tseslint = require('typescript-eslint');
const prettier = require('eslint-plugin-prettier');

module.exports = [
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', '.nx/**', 'libs/sdk/src/schema.ts'] },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    plugins: { '@nx': nx, '@typescript-eslint': tseslint.plugin, prettier },
    rules: {
      'prettier/prettier': 'error',
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:lib'] },
          ],
        },
      ],
    },
  },
  {
    // Tests may use the shared test support, which starts whole apps in-process through their
    // `<app>.app.ts` start-up module (the only app files test code may import by path); so an app's tests
    // and the test support depend on each other, which is allowed for that pair only.
    files: ['**/*.spec.ts', 'test/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: ['^(\\.\\./)+apps/[a-z-]+/src/[a-z-]+\\.app$'],
          ignoredCircularDependencies: [['tag:type:app', 'test-support']],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:test'] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:test', onlyDependOnLibsWithTags: ['type:lib', 'type:app'] },
          ],
        },
      ],
    },
  },
];
