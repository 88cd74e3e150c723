import { migrateService } from '@crm/runtime';
import { execFileSync, spawn } from 'child_process';
import { createHash } from 'crypto';
import { existsSync, readlinkSync, rmSync, symlinkSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { Client } from 'pg';
import { contactsApp } from '../../apps/contacts/src/contacts.app';
import { dealsApp } from '../../apps/deals/src/deals.app';
import { eventsApp } from '../../apps/events/src/events.app';
import { migrateGateway } from '../../apps/gateway/src/gateway.app';
import { webhooksApp } from '../../apps/webhooks/src/webhooks.app';
import { PostgresServer, startPostgresServer } from '../support/processes';
import { testEnv } from '../support/stack';

jest.setTimeout(600_000);

/**
 * Release N-1 against schema N (docs/deployment.md, "Upgrading"): during a rollout the previous release's
 * pods serve on the schema the new release's migrations left. The previous release is the last commit
 * before this round's first migration (PREVIOUS_RELEASE, cedc1b1 by default); its tree is checked out
 * once per commit beside this one and its own API tests run, unchanged, with its own code, on a private
 * PostgreSQL whose template1 holds every schema as this build's migrations leave it: each test database
 * the old suite makes is a copy of template1, so its services find their migrations applied and serve on
 * the new schema as they would mid-rollout.
 */
const ROOT = join(__dirname, '..', '..');
const REF = process.env.PREVIOUS_RELEASE ?? 'cedc1b1';
/** A few of its API tests: writes and reads of records, custom fields, search, the event log and webhooks. */
const TESTS = (process.env.PREVIOUS_RELEASE_TESTS ?? 'contacts,custom-fields,search,events,webhooks').split(',').map((t) => `test/api/${t}.spec.ts`);

function git(...args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
}

/**
 * The previous release's tree, kept between runs in a directory named by its commit and by this checkout:
 * another clone's tree (a CI clone since deleted) holds a worktree of that clone and a link to its
 * dependencies, which may be gone.
 */
function previousRelease(): string {
  const commit = git('rev-parse', `${REF}^{commit}`);
  const checkout = createHash('sha256').update(ROOT).digest('hex').slice(0, 12);
  const dir = join(tmpdir(), `crm-release-${commit}-${checkout}`);
  if (!existsSync(join(dir, 'package.json'))) {
    git('worktree', 'prune');
    git('worktree', 'add', '--detach', '--force', dir, commit);
  }
  // Its tests compile from source as they run (@swc/jest): no build, this tree's dependencies. A link
  // left pointing elsewhere (or nowhere: existsSync follows it) is made again.
  const link = join(dir, 'node_modules');
  const dependencies = join(ROOT, 'node_modules');
  if (linkTarget(link) !== dependencies) {
    rmSync(link, { force: true });
    symlinkSync(dependencies, link);
  }
  return dir;
}

function linkTarget(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

/** Every schema as this build's migrations leave it, in template1 of `server`. */
async function migrateTemplate(server: PostgresServer): Promise<void> {
  const env = { ...testEnv(), DATABASE_URL: server.url('template1'), DATABASE_POOL_SIZE: '2' };
  for (const definition of [contactsApp, dealsApp, eventsApp, webhooksApp(env)]) await migrateService(definition, env);
  await migrateGateway(env);
}

function run(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe(`previous release (${REF}) on this schema`, () => {
  let server: PostgresServer;
  beforeAll(async () => {
    server = await startPostgresServer();
  });
  afterAll(() => server?.destroy());

  it('passes its own API tests', async () => {
    const dir = previousRelease();
    await migrateTemplate(server);
    // A database made now is a copy of template1: this build's schemas, its newest migrations recorded.
    const pg = new Client({ connectionString: server.url('postgres') });
    await pg.connect();
    await pg.query(`CREATE DATABASE probe`);
    const probe = new Client({ connectionString: server.url('probe') });
    await probe.connect();
    const newest = await probe.query(`SELECT max(timestamp)::text AS newest FROM contacts.migrations`);
    await probe.end();
    await pg.query(`DROP DATABASE probe`);
    await pg.end();
    expect(Number(newest.rows[0].newest)).toBeGreaterThan(1765600000100);
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: server.url('crm') };
    delete env.CRM_TEST_RUN; // its own run id: its teardown checks what it left, not what this run's suites hold
    const result = await run(dir, [join(dir, 'node_modules', 'jest', 'bin', 'jest.js'), '--ci', '--maxWorkers=1', ...TESTS], env);
    if (result.code !== 0) console.log(result.output.slice(-20_000));
    expect(result.output).toMatch(new RegExp(`Test Suites: ${TESTS.length} passed, ${TESTS.length} total`));
    expect(result.code).toBe(0);
  });
});
