import { event, EventType } from '@crm/contracts';
import { deletedChange, OutboxService } from '@crm/messaging';
import { COMMON_ERASURE_STORES, ErasureDeclaration, ErasureStore, redactingStore, redactRows, rowsChanged, searchWordsStore } from '@crm/runtime';

/**
 * Activities and tasks of the contact (docs/privacy.md, "Rules"): one whose only subject is the contact
 * (no deal) is deleted; one that also belongs to a deal keeps the deal, loses the contact and has the
 * person's values taken out of its text; any other that names the person has them taken out too.
 */
function workItemStore(table: 'activities' | 'tasks', textColumns: readonly string[]): ErasureStore {
  return {
    name: table,
    tables: [table],
    async erase(m, target) {
      let deleted = 0;
      if (target.contact_id) {
        deleted = await rowsChanged(m, `DELETE FROM ${table} WHERE contact_id = $1 AND deal_id IS NULL`, [target.contact_id]);
        await m.query(`UPDATE ${table} SET contact_id = NULL WHERE contact_id = $1`, [target.contact_id]);
      }
      const columns = Object.fromEntries([
        ...textColumns.map((c) => [c, 'text'] as const),
        ['metadata', 'jsonb'] as const,
        ['custom_fields', 'jsonb'] as const,
      ]);
      const redacted = await redactRows(m, { table, key: 'id', columns }, { ...target, contact_id: null });
      return { deleted, redacted: redacted.redacted };
    },
  };
}

/** Every table of the contacts schema, and how the person leaves it. */
export function contactsErasureDeclaration(outbox: OutboxService): ErasureDeclaration {
  const contactRow: ErasureStore = {
    name: 'contacts',
    tables: ['contacts', 'contact_companies'],
    async erase(m, target) {
      if (!target.contact_id) return { deleted: 0, redacted: 0 };
      const associations = await rowsChanged(m, `DELETE FROM contact_companies WHERE contact_id = $1`, [target.contact_id]);
      const rows = await rowsChanged(m, `DELETE FROM contacts WHERE id = $1`, [target.contact_id]);
      if (rows) {
        // Who erased it, through which channel and request; no value of the person.
        await outbox.record(m, {
          events: [event(EventType.ContactDeleted, { contact_id: target.contact_id })],
          changes: [deletedChange('contacts', target.contact_id, {})],
        });
      }
      return { deleted: rows + associations, redacted: 0 };
    },
  };
  return {
    service: 'contacts',
    stores: [
      workItemStore('activities', ['subject', 'body']),
      workItemStore('tasks', ['title', 'description']),
      contactRow,
      redactingStore('changes', {
        table: 'changes',
        key: 'id',
        columns: { previous: 'jsonb', current: 'jsonb' },
        owned: `r.object = 'contacts' AND r.record_id = $2`,
        done: `coalesce((r.previous->>'redacted')::boolean, (r.current->>'redacted')::boolean, false)`,
      }),
      redactingStore('import_rows', { table: 'import_rows', key: 'ctid', keyType: 'tid', columns: { values: 'jsonb', error: 'jsonb' } }),
      redactingStore('object_records', { table: 'object_records', key: 'id', columns: { values: 'jsonb' } }),
      redactingStore('companies', { table: 'companies', key: 'id', columns: { metadata: 'jsonb', custom_fields: 'jsonb' } }),
      ...COMMON_ERASURE_STORES,
      searchWordsStore,
    ],
    noPersonalData: {
      association_types: 'definitions of association kinds',
      built_in_custom_fields: 'field definitions',
      object_types: 'object definitions',
      users: 'team members, not the people a CRM holds',
      imports: 'counts and the job, the rows are in import_rows',
      erasures: 'the erasure itself: the values being erased are cleared on completion',
      privacy_keys: 'the key email hashes are made with',
      suppressions: 'keyed hashes of suppressed emails, never an email',
    },
  };
}
