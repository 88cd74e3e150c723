import { openDatabase } from '@crm/common';
import { existsSync, readFileSync, writeFileSync } from 'fs';
import { relative } from 'path';
import { dropNamespace, testEnv } from '../support/stack';
import { SERVICES, snapshot, snapshotFile } from './schema-snapshot';

/**
 * `npm run schema:snapshots`: migrates an empty database and writes each service's schema to its
 * committed snapshot, after an intended migration change. Not part of any test run (no `.spec.ts`): the
 * schema-drift spec only compares, so it cannot pass by rewriting what it checks.
 */
describe('schema snapshots', () => {
  const env = testEnv();
  afterAll(() => dropNamespace(env));

  it('writes the migrated schema of every service to its snapshot file', async () => {
    const changed: string[] = [];
    for (const [service, { entities, migrations }] of Object.entries(SERVICES)) {
      const ds = await openDatabase({ url: env.DATABASE_URL!, schema: service, entities, migrations });
      try {
        const file = snapshotFile(service);
        const actual = await snapshot(ds, service);
        if (!existsSync(file) || readFileSync(file, 'utf8') !== actual) {
          writeFileSync(file, actual);
          changed.push(relative(process.cwd(), file));
        }
      } finally {
        await ds.destroy();
      }
    }
    process.stdout.write(changed.length ? `rewrote ${changed.join(', ')}: review the diff\n` : 'every schema snapshot is up to date\n');
  });
});
