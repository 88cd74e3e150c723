import { undeclaredTables } from '@crm/runtime';
import { readFileSync } from 'fs';
import { join } from 'path';
import { eventsErasureDeclaration } from './events-erasure';

/** Every table of the events schema says how the person leaves it, or why it holds nothing of them (docs/privacy.md). */
describe('the events service erasure declaration', () => {
  it('accounts for every table of its schema', () => {
    const snapshot = readFileSync(join(__dirname, '../database/schema.snapshot.txt'), 'utf8');
    expect(undeclaredTables(eventsErasureDeclaration, snapshot)).toEqual([]);
  });
});
