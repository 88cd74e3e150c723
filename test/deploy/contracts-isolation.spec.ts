import { spawnSync } from 'child_process';
import { existsSync, readdirSync, readFileSync } from 'fs';
import { join, relative } from 'path';

/**
 * @crm/contracts is what a team that subscribes to our NATS subjects takes: the request and event
 * classes, the event catalogue and class-validator. Loading it must not load our server: no ORM,
 * database or Redis driver, no tracing SDK, none of our other libraries.
 */
const ROOT = join(__dirname, '..', '..');
const BUILT = join(ROOT, 'dist', 'libs', 'contracts', 'src', 'index.js');
const SOURCES = join(ROOT, 'libs', 'contracts', 'src');

const SERVER_PACKAGES = /[\\/]node_modules[\\/](typeorm|pg|pg-[^\\/]+|ioredis|@opentelemetry[\\/][^\\/]+)[\\/]/;
const SERVER_LIBRARIES = /[\\/]dist[\\/]libs[\\/](common|messaging|runtime|records)[\\/]/;

interface Loaded {
  modules: string[];
  exports: string[];
}

/** Requires the built library in a fresh Node process (Jest's module registry would hide what Node loads). */
function load(entry: string): Loaded {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first (npm test does)`);
  const script = `
    const before = new Set(Object.keys(require.cache));
    const contracts = require(${JSON.stringify(entry)});
    const modules = Object.keys(require.cache).filter((file) => !before.has(file));
    process.stdout.write(JSON.stringify({ modules, exports: Object.keys(contracts) }));
  `;
  const run = spawnSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH } });
  if (run.status !== 0) throw new Error(`requiring ${entry} failed (${run.status ?? run.signal}): ${run.stderr}`);
  return JSON.parse(run.stdout) as Loaded;
}

function packageOf(file: string): string {
  const [, name] = /node_modules[\\/]((?:@[^\\/]+[\\/])?[^\\/]+)/.exec(file) ?? [];
  return name ?? relative(ROOT, file);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('@crm/contracts on its own', () => {
  it('loads the classes, the event catalogue and class-validator, and nothing of the server', () => {
    const { modules, exports } = load(BUILT);
    const server = [...new Set(modules.filter((file) => SERVER_PACKAGES.test(file) || SERVER_LIBRARIES.test(file)).map(packageOf))].sort();
    expect(server).toEqual([]);
    expect(modules.some((file) => packageOf(file) === 'class-validator')).toBe(true);
    expect(exports).toEqual(expect.arrayContaining(['CreateContactDto', 'EVENT_TYPES', 'DomainError', 'PageQuery', 'IsMetadata']));
  });

  it('imports no other library of ours, not even for types', () => {
    // A type-only import leaves no trace at run time, but the library would no longer build without ours.
    const crossings = sourceFiles(SOURCES).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\b(?:from|import|require\(|import\()\s*['"]([^'"]+)['"]/g)]
        .map(([, specifier]) => specifier)
        .filter((specifier) => /^@crm\//.test(specifier) || (specifier.startsWith('.') && !join(file, '..', specifier).startsWith(SOURCES)))
        .map((specifier) => `${relative(ROOT, file)}: ${specifier}`),
    );
    expect(crossings).toEqual([]);
  });
});
