import { DEFAULT_DATABASE_URL } from '@crm/common';
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';
import { Client } from 'pg';

/**
 * Every PostgreSQL extension a migration creates is one docs/deployment.md tells the platform about, where
 * it lists what the platform must provide: a provider that restricts extensions needs them made beforehand.
 */
const ROOT = join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? e.name === 'node_modules'
        ? []
        : sources(join(dir, e.name))
      : e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts')
        ? [join(dir, e.name)]
        : [],
  );
}

describe('PostgreSQL extensions', () => {
  let available: string[];
  beforeAll(async () => {
    const url = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
    url.pathname = '/postgres';
    const pg = new Client({ connectionString: url.toString() });
    await pg.connect();
    try {
      available = (await pg.query<{ name: string }>('SELECT name FROM pg_available_extensions')).rows.map((r) => r.name);
    } finally {
      await pg.end();
    }
  });

  it('that the migrations create are the ones docs/deployment.md lists for the platform', () => {
    // A file that creates extensions names each, quoted or after CREATE EXTENSION IF NOT EXISTS.
    const creating = [...sources(join(ROOT, 'apps')), ...sources(join(ROOT, 'libs'))]
      .map((f) => readFileSync(f, 'utf8'))
      .filter((text) => text.includes('CREATE EXTENSION'));
    const created = available.filter((name) => creating.some((text) => new RegExp(`(['"\`]|EXISTS )${name}(['"\`]| WITH)`).test(text))).sort();
    expect(created).toEqual(['fuzzystrmatch', 'pg_trgm', 'unaccent']);

    const guide = readFileSync(join(ROOT, 'docs', 'deployment.md'), 'utf8');
    const platform = guide.slice(guide.indexOf('## What the platform must provide'), guide.indexOf('## Scaling'));
    for (const name of created) expect({ name, listed: platform.includes(`\`${name}\``) }).toEqual({ name, listed: true });
  });
});
