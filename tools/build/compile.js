#!/usr/bin/env node
/**
 * Usage: node tools/build/compile.js <project>/tsconfig.<lib|app>.json
 *
 * Emits one project's own files (those its tsconfig includes) into dist/ at the same relative path, with SWC:
 * the transform the tests already run the sources through (.swcrc), so what ships is what was tested. The
 * `@crm/*` aliases of tsconfig.base.json become relative paths, so dist/apps/x/src/main.js runs with plain
 * `node`. Types are checked once for the whole workspace by the `tools:typecheck` target: compiling each
 * project with `tsc -b` parsed the same declarations of NestJS, TypeORM and Node fifteen times over.
 */
const { readFileSync, mkdirSync, writeFileSync } = require('fs');
const { dirname, join, relative, resolve } = require('path');
const ts = require('typescript');
const swc = require('@swc/core');

const ROOT = resolve(__dirname, '..', '..');

function projectFiles(tsconfig) {
  const path = resolve(tsconfig);
  const { config, error } = ts.readConfigFile(path, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, dirname(path));
  return { files: parsed.fileNames.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')), options: parsed.options };
}

async function main(tsconfig) {
  if (!tsconfig) throw new Error('usage: compile.js <path to the project tsconfig>');
  const swcrc = JSON.parse(readFileSync(join(ROOT, '.swcrc'), 'utf8'));
  const { files, options } = projectFiles(tsconfig);
  const paths = Object.fromEntries(Object.entries(options.paths ?? {}).map(([alias, targets]) => [alias, targets.map((target) => target.replace(/\.ts$/, ''))]));
  const outDir = options.outDir ?? join(ROOT, 'dist');
  const rootDir = options.rootDir ?? ROOT;
  await Promise.all(
    files.map(async (file) => {
      const out = join(outDir, relative(rootDir, file)).replace(/\.ts$/, '.js');
      const { code, map } = await swc.transformFile(file, {
        ...swcrc,
        swcrc: false,
        filename: file,
        sourceMaps: true,
        sourceFileName: relative(dirname(out), file),
        jsc: { ...swcrc.jsc, baseUrl: ROOT, paths },
      });
      mkdirSync(dirname(out), { recursive: true });
      const mapName = `${out.slice(dirname(out).length + 1)}.map`;
      writeFileSync(out, `${code}\n//# sourceMappingURL=${mapName}\n`);
      writeFileSync(`${out}.map`, map);
    }),
  );
}

main(process.argv[2]).catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
