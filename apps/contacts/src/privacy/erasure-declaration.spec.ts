import { undeclaredTables } from '@crm/runtime';
import { readFileSync } from 'fs';
import { join } from 'path';
import { OutboxService } from '@crm/messaging';
import { contactsErasureDeclaration } from './contacts-erasure.stores';

/** Every table of the contacts schema says how the person leaves it, or why it holds nothing of them (docs/privacy.md). */
describe('the contacts service erasure declaration', () => {
  it('accounts for every table of its schema', () => {
    const snapshot = readFileSync(join(__dirname, '../database/schema.snapshot.txt'), 'utf8');
    expect(undeclaredTables(contactsErasureDeclaration({} as OutboxService), snapshot)).toEqual([]);
  });
});
