import { undeclaredTables } from '@crm/runtime';
import { readFileSync } from 'fs';
import { join } from 'path';
import { webhooksErasureDeclaration } from './webhooks-erasure';

/** Every table of the webhooks schema says how the person leaves it, or why it holds nothing of them (docs/privacy.md). */
describe('the webhooks service erasure declaration', () => {
  it('accounts for every table of its schema', () => {
    const snapshot = readFileSync(join(__dirname, '../database/schema.snapshot.txt'), 'utf8');
    expect(undeclaredTables(webhooksErasureDeclaration, snapshot)).toEqual([]);
  });
});
