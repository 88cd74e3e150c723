import { spawnSync } from 'child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { lintFromString, createConfig } from '@redocly/openapi-core';
import { describeApiOffline } from '../../apps/gateway/src/gateway.app';
import { OpenApiContract } from '../support/openapi-contract';

const ROOT = join(__dirname, '..', '..');
type Document = Awaited<ReturnType<typeof describeApiOffline>>;

describe('the OpenAPI document', () => {
  let document: Document;
  let text: string;
  beforeAll(async () => {
    document = await describeApiOffline();
    text = `${JSON.stringify(document, null, 2)}\n`;
  });

  it('is valid OpenAPI 3.1 by a real validator, with every reference resolved', async () => {
    expect(document.openapi).toBe('3.1.0');
    const problems = await lintFromString({ source: text, absoluteRef: join(ROOT, 'openapi.json'), config: await createConfig({ extends: ['recommended'] }) });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(errors).toEqual([]);
    // The validator does find problems: the same document with one dangling reference fails.
    const broken = text.replace('"#/components/schemas/ContactView"', '"#/components/schemas/NoSuchView"');
    const found = await lintFromString({ source: broken, absoluteRef: join(ROOT, 'openapi.json'), config: await createConfig({ extends: ['recommended'] }) });
    expect(found.filter((p) => p.severity === 'error').length).toBeGreaterThan(0);
  });

  it('describes the release in package.json', () => {
    expect(document.info.version).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });

  it('gives every keyed operation a success answer, the key scheme, rate-limit headers and the shared errors', () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, any>).map(([method, operation]) => ({ path, method, operation })),
    );
    expect(operations.length).toBeGreaterThan(60);
    for (const { path, method, operation } of operations) {
      const statuses = Object.keys(operation.responses);
      expect({ path, method, success: statuses.some((s) => /^2/.test(s)) }).toEqual({ path, method, success: true });
      if (operation.security?.length === 0) continue;
      for (const status of ['400', '401', '403', '429', '500', '503'])
        expect({ path, method, status, listed: statuses.includes(status) }).toEqual({ path, method, status, listed: true });
      const success = operation.responses[statuses.find((s) => /^2/.test(s))!];
      expect(Object.keys(success.headers ?? {})).toEqual(expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
    }
    expect(document.components?.securitySchemes?.ApiKey).toEqual({ type: 'apiKey', in: 'header', name: 'X-Api-Key' });
    expect(document.components?.securitySchemes?.BearerToken).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    // Alternatives: a key or a token, each enough alone, on every keyed operation.
    expect(document.security).toEqual([{ ApiKey: [] }, { BearerToken: [] }]);
    for (const { path, method, operation } of operations) {
      const security = operation.security ?? document.security;
      if (security.length === 0) continue;
      expect({ path, method, security }).toEqual({ path, method, security: [{ ApiKey: [] }, { BearerToken: [] }] });
    }
  });

  it('documents the cursor and limit of every list, with their bounds', () => {
    const contacts = (document.paths['/contacts'].get!.parameters ?? []) as Array<{ name: string; in: string; schema: Record<string, unknown> }>;
    expect(contacts.find((p) => p.name === 'limit')).toMatchObject({ in: 'query', schema: { type: 'integer', minimum: 1, maximum: 200 } });
    expect(contacts.find((p) => p.name === 'cursor')).toMatchObject({ in: 'query', schema: { type: 'string' } });
    expect(contacts.map((p) => p.name)).toEqual(expect.arrayContaining(['stage', 'source', 'search', 'icp_score_min', 'created_after']));
  });

  it('is committed in libs/sdk, with the client types generated from it (npm run sdk)', () => {
    expect(readFileSync(join(ROOT, 'libs/sdk/openapi.json'), 'utf8')).toBe(text);
    const dir = mkdtempSync(join(tmpdir(), 'crm-sdk-'));
    try {
      writeFileSync(join(dir, 'openapi.json'), text);
      const generated = spawnSync('npx', ['openapi-typescript', join(dir, 'openapi.json'), '-o', join(dir, 'schema.ts')], { cwd: ROOT, encoding: 'utf8' });
      expect(generated.status).toBe(0);
      expect(readFileSync(join(ROOT, 'libs/sdk/src/schema.ts'), 'utf8')).toBe(readFileSync(join(dir, 'schema.ts'), 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('as the contract the black-box tests check every response against', () => {
    let contract: OpenApiContract;
    const contact = {
      id: 'cont_01',
      email: 'a@example.com',
      first_name: null,
      last_name: null,
      stage: null,
      source: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    };
    beforeAll(() => {
      contract = new OpenApiContract(JSON.parse(text));
    });

    it('accepts a documented answer', () => {
      expect(contract.check('POST', 'http://x/contacts', 201, 'application/json', { data: contact })).toBeUndefined();
      expect(
        contract.check('GET', 'http://x/contacts/cont_01', 404, 'application/json', { error: { code: 'not_found', message: 'No contact.' } }),
      ).toBeUndefined();
    });

    it('rejects an undocumented field, a wrong type, an undocumented status and a body outside the error shape', () => {
      expect(contract.check('POST', 'http://x/contacts', 201, 'application/json', { data: { ...contact, secret: 1 } })).toMatch(/additional properties/);
      expect(contract.check('POST', 'http://x/contacts', 201, 'application/json', { data: { ...contact, stage: 'nope' } })).toMatch(/allowed values/);
      expect(contract.check('POST', 'http://x/contacts', 200, 'application/json', { data: contact })).toMatch(/does not list/);
      expect(contract.check('GET', 'http://x/contacts/cont_01', 404, 'application/json', { message: 'gone' })).toMatch(/breaks the document/);
      expect(contract.check('PUT', 'http://x/contacts/cont_01', 500, 'application/json', { error: { code: 'internal_error', message: 'x' } })).toMatch(
        /not in the document/,
      );
    });
  });
});
