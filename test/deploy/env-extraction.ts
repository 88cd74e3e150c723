import { readdirSync, readFileSync } from 'fs';
import { join, relative, sep } from 'path';
import * as ts from 'typescript';

/**
 * Finds, without running anything, every environment variable the code reads, so the deployment
 * files can be checked against it.
 *
 * A read is a call of a config reader whose name argument is a string literal:
 * `intVar(env, 'PORT', 3000)`. The readers are those of libs/common/src/config.ts plus every function
 * that passes one of its own parameters on as the name of a reader (or indexes an `env` object with
 * it), found to a fixed point across all files: `scheduleVar(env, 'WEBHOOKS_RETRY_SCHEDULE_MS', ...)`
 * counts because scheduleVar calls `stringVar(env, name, '')`. Direct reads such as
 * `process.env.NAME`, `process.env['NAME']` and `env.NAME` count too. A reader called with a name that
 * is neither a literal nor a parameter of the enclosing function cannot be resolved statically and is
 * reported, so a new kind of read cannot slip past the check unnoticed.
 */

/** The readers of libs/common/src/config.ts; the variable name is their second argument. */
export const BASE_READERS: ReadonlyMap<string, number> = new Map([
  ['stringVar', 1],
  ['intVar', 1],
  ['boolVar', 1],
  ['enumVar', 1],
  ['urlVar', 1],
  ['optionalVar', 1],
]);

/** Identifiers taken to be the environment when indexed directly (`env.NAME`, `env[name]`). */
const ENV_OBJECTS = new Set(['env']);

export interface SourceFile {
  /** Path relative to the repository root, with forward slashes. */
  path: string;
  text: string;
}

export interface EnvRead {
  name: string;
  path: string;
  line: number;
  /** Name of the innermost named function around the read, or undefined at module level. */
  fn?: string;
}

export interface Unresolved {
  path: string;
  line: number;
  code: string;
}

export interface ScanResult {
  reads: EnvRead[];
  /** Every reader: the base ones and the wrappers found, with the position of their name argument. */
  readers: Map<string, number>;
  unresolved: Unresolved[];
}

type FunctionLike = ts.FunctionDeclaration | ts.FunctionExpression | ts.ArrowFunction | ts.MethodDeclaration;

function isFunctionLike(node: ts.Node): node is FunctionLike {
  return ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node);
}

function functionName(node: FunctionLike): string | undefined {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node) || ts.isFunctionExpression(node)) && node.name) {
    return node.name.getText();
  }
  // const scheduleVar = (env, name) => ... / const scheduleVar = function (env, name) { ... }
  if (ts.isVariableDeclaration(node.parent) && ts.isIdentifier(node.parent.name)) return node.parent.name.text;
  if (ts.isPropertyAssignment(node.parent)) return node.parent.name.getText();
  return undefined;
}

function enclosingFunction(node: ts.Node): FunctionLike | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (isFunctionLike(current)) return current;
  }
  return undefined;
}

function enclosingFunctionName(node: ts.Node): string | undefined {
  for (let fn = enclosingFunction(node); fn; fn = enclosingFunction(fn)) {
    const name = functionName(fn);
    if (name) return name;
  }
  return undefined;
}

/** The position of `identifier` among the parameters of the function around it, or -1. */
function parameterIndex(identifier: ts.Identifier): { fn?: FunctionLike; index: number } {
  const fn = enclosingFunction(identifier);
  if (!fn) return { index: -1 };
  const index = fn.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === identifier.text);
  return { fn, index };
}

function literalText(node: ts.Expression | undefined): string | undefined {
  if (!node) return undefined;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  return undefined;
}

function calleeName(call: ts.CallExpression): string | undefined {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

function isProcessEnv(node: ts.Expression): boolean {
  return ts.isPropertyAccessExpression(node) && node.name.text === 'env' && ts.isIdentifier(node.expression) && node.expression.text === 'process';
}

function isEnvObject(node: ts.Expression): boolean {
  return isProcessEnv(node) || (ts.isIdentifier(node) && ENV_OBJECTS.has(node.text));
}

/** Scans sources for environment reads; see the comment at the top of this file. */
export function scanSources(files: SourceFile[], baseReaders: ReadonlyMap<string, number> = BASE_READERS): ScanResult {
  const parsed = files.map((f) => ({ file: f, sf: ts.createSourceFile(f.path, f.text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS) }));
  const readers = new Map(baseReaders);

  const lineOf = (sf: ts.SourceFile, node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;

  /** Each place a name is looked up: a reader call or an index into the environment. */
  type Lookup = { sf: ts.SourceFile; path: string; node: ts.Node; nameExpr: ts.Expression | undefined; reader: boolean };
  const collect = (): Lookup[] => {
    const lookups: Lookup[] = [];
    for (const { file, sf } of parsed) {
      const visit = (node: ts.Node): void => {
        if (ts.isCallExpression(node)) {
          const name = calleeName(node);
          const index = name === undefined ? undefined : readers.get(name);
          // A reader's own declaration is not a call of it; calls of it are.
          if (index !== undefined) lookups.push({ sf, path: file.path, node, nameExpr: node.arguments[index], reader: true });
        } else if (ts.isPropertyAccessExpression(node) && isEnvObject(node.expression)) {
          lookups.push({ sf, path: file.path, node, nameExpr: ts.factory.createStringLiteral(node.name.text), reader: false });
        } else if (ts.isElementAccessExpression(node) && isEnvObject(node.expression)) {
          lookups.push({ sf, path: file.path, node, nameExpr: node.argumentExpression, reader: false });
        }
        ts.forEachChild(node, visit);
      };
      visit(sf);
    }
    return lookups;
  };

  // Grow the set of readers until no function passes a parameter on as a variable name.
  let lookups = collect();
  for (;;) {
    let grew = false;
    for (const lookup of lookups) {
      if (!lookup.nameExpr || !ts.isIdentifier(lookup.nameExpr)) continue;
      const { fn, index } = parameterIndex(lookup.nameExpr);
      const name = fn && functionName(fn);
      if (name && index >= 0 && readers.get(name) === undefined) {
        readers.set(name, index);
        grew = true;
      }
    }
    if (!grew) break;
    lookups = collect();
  }

  const reads: EnvRead[] = [];
  const unresolved: Unresolved[] = [];
  for (const lookup of lookups) {
    const literal = literalText(lookup.nameExpr);
    if (literal !== undefined) {
      reads.push({ name: literal, path: lookup.path, line: lineOf(lookup.sf, lookup.node), fn: enclosingFunctionName(lookup.node) });
      continue;
    }
    if (lookup.nameExpr && ts.isIdentifier(lookup.nameExpr)) {
      const { fn, index } = parameterIndex(lookup.nameExpr);
      // Inside a reader, the name is its parameter: the reads are its callers'.
      if (fn && index >= 0 && readers.get(functionName(fn) ?? '') === index) continue;
    }
    unresolved.push({ path: lookup.path, line: lineOf(lookup.sf, lookup.node), code: lookup.node.getText(lookup.sf) });
  }
  return { reads, readers, unresolved };
}

/** The .ts files of apps/ and libs/ that ship: no specs or their support files, no test folders. */
export function shippedSources(root: string): SourceFile[] {
  const out: SourceFile[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name === 'test' || entry.name === 'node_modules') continue;
        walk(full);
      } else if (entry.name.endsWith('.ts') && !/\.(spec|test|spec-support)\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        out.push({ path: relative(root, full).split(sep).join('/'), text: readFileSync(full, 'utf8') });
      }
    }
  };
  for (const top of ['apps', 'libs']) walk(join(root, top));
  return out;
}

/**
 * Which process reads which variable. A file under apps/<app>/ is read by <app> only. A file under
 * libs/ is read by every process, except reads inside the functions named in `libScopes`, which are
 * read by the processes listed there (loadServiceConfig: the four NATS services, not the gateway).
 */
export function attribute(reads: EnvRead[], processes: readonly string[], libScopes: Record<string, readonly string[]>): Map<string, Set<string>> {
  const byProcess = new Map(processes.map((p) => [p, new Set<string>()]));
  for (const read of reads) {
    const app = /^apps\/([^/]+)\//.exec(read.path)?.[1];
    let readers: readonly string[];
    if (app !== undefined) readers = [app];
    else if (read.path.startsWith('libs/')) readers = (read.fn && libScopes[read.fn]) || processes;
    else throw new Error(`${read.path}: not under apps/ or libs/`);
    for (const process of readers) {
      const set = byProcess.get(process);
      if (!set) throw new Error(`${read.path}:${read.line} reads ${read.name} for '${process}', which is not a deployed process`);
      set.add(read.name);
    }
  }
  return byProcess;
}
