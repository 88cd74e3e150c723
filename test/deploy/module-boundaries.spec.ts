import { spawnSync } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

/**
 * `npm run lint` enforces the module boundaries on a fresh clone: Nx computes the project graph before
 * ESLint runs, so @nx/enforce-module-boundaries really checks imports instead of skipping every file.
 * Each run gets empty Nx cache and workspace-data directories, as a fresh clone or CI machine would.
 */
const ROOT = join(__dirname, '..', '..');
const SKIPPED = 'No cached ProjectGraph';
const RULE = '@nx/enforce-module-boundaries';

function lint(projects: string[]): { status: number | null; output: string } {
  const scratch = mkdtempSync(join(tmpdir(), 'crm-lint-'));
  try {
    const run = spawnSync('npm', ['run', 'lint', '--', `--projects=${projects.join(',')}`], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 240_000,
      env: {
        ...process.env,
        NX_CACHE_DIRECTORY: join(scratch, 'cache'),
        NX_WORKSPACE_DATA_DIRECTORY: join(scratch, 'workspace-data'),
      },
    });
    // ESLint's report comes through Nx's terminal with colours; compare the plain text.
    const output = `${run.stdout}\n${run.stderr}`.replace(/\u001b\[[0-9;]*m/g, '');
    return { status: run.status, output };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

describe('npm run lint: module boundaries', () => {
  const name = `boundary-check-${process.pid}.ts`;
  const appFile = join('apps', 'gateway', 'src', name);
  const libFile = join('libs', 'common', 'src', name);

  // That the projects as they are pass is `npm test`'s own lint step; this run plants the two imports the
  // rule exists for and needs them reported, on empty caches as on a fresh clone.
  it('fails when an app imports another app or a library imports an app', () => {
    try {
      writeFileSync(join(ROOT, appFile), "import '../../contacts/src/main';\n");
      writeFileSync(join(ROOT, libFile), "import '../../../apps/gateway/src/main';\n");
      const { status, output } = lint(['gateway', 'common']);
      expect(output).not.toContain(SKIPPED);
      for (const file of [appFile, libFile]) {
        const report = output.slice(output.indexOf(file));
        expect(output).toContain(file);
        expect(report).toMatch(new RegExp(`^\\s*1:1\\s+error\\s+.*${RULE.replace('/', '\\/')}`, 'm'));
      }
      expect(status).not.toBe(0);
    } finally {
      rmSync(join(ROOT, appFile), { force: true });
      rmSync(join(ROOT, libFile), { force: true });
    }
  }, 300_000);
});
