import { Ops } from '@crm/contracts';
import {
  COMMON_ERASURE_STORES,
  ErasureDeclaration,
  ErasureStore,
  erasureStepModule,
  redactingStore,
  redactRows,
  rowsChanged,
  searchWordsStore,
} from '@crm/runtime';

/** Deals keep their money and stage history and lose the contact: the link and the associations go. */
const dealLinks: ErasureStore = {
  name: 'deals',
  tables: ['deals', 'deal_contacts'],
  async erase(m, target) {
    let deleted = 0;
    let redacted = 0;
    if (target.contact_id) {
      deleted = await rowsChanged(m, `DELETE FROM deal_contacts WHERE contact_id = $1`, [target.contact_id]);
      redacted = await rowsChanged(m, `UPDATE deals SET contact_id = NULL, updated_at = clock_timestamp() WHERE contact_id = $1`, [target.contact_id]);
    }
    const text = await redactRows(
      m,
      { table: 'deals', key: 'id', columns: { name: 'text', loss_reason: 'text', metadata: 'jsonb', custom_fields: 'jsonb' } },
      { ...target, contact_id: null },
    );
    return { deleted, redacted: redacted + text.redacted };
  },
};

export const dealsErasureDeclaration: ErasureDeclaration = {
  service: 'deals',
  stores: [
    dealLinks,
    redactingStore('changes', { table: 'changes', key: 'id', columns: { previous: 'jsonb', current: 'jsonb' } }),
    // A free-text line's name may name the person, as a deal's name may.
    redactingStore('line_items', { table: 'line_items', key: 'id', columns: { name: 'text' } }),
    redactingStore('import_batches', { table: 'import_batches', key: 'ctid', keyType: 'tid', columns: { result: 'jsonb' } }),
    ...COMMON_ERASURE_STORES,
    searchWordsStore,
  ],
  noPersonalData: {
    association_types: 'definitions of association kinds',
    built_in_custom_fields: 'field definitions',
    pipelines: 'pipeline definitions',
    products: 'the product catalogue',
    stages: 'stage definitions',
    stage_history: 'deal ids, stages and times',
  },
};

export const DealsErasureModule = erasureStepModule(Ops.privacyInternal.deals, dealsErasureDeclaration);
