#!/usr/bin/env node
/**
 * Usage: node tools/build/rewrite-import-aliases.js <project>/tsconfig.<lib|app>.json
 *
 * The compiler keeps the `@crm/*` import aliases of tsconfig.base.json as they are; Node cannot resolve
 * them, so after a project is compiled its output under dist/<project root> has them rewritten to
 * relative paths (dist/apps/x/src/main.js then runs with plain `node`). Only that project's own output
 * is touched, so project builds can run side by side and be cached one by one.
 */
const { prepareSingleFileReplaceTscAliasPaths } = require('tsc-alias');
const { existsSync, readdirSync, readFileSync, writeFileSync } = require('fs');
const { dirname, join, relative, resolve } = require('path');

/**
 * A project that imports libraries through the path aliases rather than project references (scripts/,
 * bench/) compiles those libraries' sources too and emits them into dist/libs with the aliases back;
 * `tsc -b` may also emit a referenced project again. So every library's output is rewritten as well.
 * Rewriting is idempotent: already-relative paths stay as they are.
 */
async function main(tsconfig, seen = new Set()) {
  if (!tsconfig) throw new Error('usage: rewrite-import-aliases.js <path to the project tsconfig>');
  if (seen.has(resolve(tsconfig))) return;
  seen.add(resolve(tsconfig));
  const { config } = require('typescript').readConfigFile(resolve(tsconfig), (path) => readFileSync(path, 'utf8'));
  const workspace = resolve(__dirname, '..', '..');
  const libraries = readdirSync(join(workspace, 'libs')).map((name) => join(workspace, 'libs', name, 'tsconfig.lib.json'));
  for (const reference of config?.references ?? []) {
    const target = resolve(dirname(resolve(tsconfig)), reference.path);
    await main(target.endsWith('.json') ? target : join(target, 'tsconfig.json'), seen);
  }
  for (const library of libraries) if (existsSync(library) && existsSync(join(workspace, 'dist', relative(workspace, dirname(library))))) await main(library, seen);
  const output = join(workspace, 'dist', relative(workspace, dirname(resolve(tsconfig))));
  const rewrite = await prepareSingleFileReplaceTscAliasPaths({ configFile: resolve(tsconfig) });
  for (const entry of readdirSync(output, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.js')) continue;
    const filePath = join(entry.parentPath, entry.name);
    const fileContents = readFileSync(filePath, 'utf8');
    const rewritten = rewrite({ fileContents, filePath });
    if (rewritten !== fileContents) writeFileSync(filePath, rewritten);
  }
}

main(process.argv[2]).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
