import { ERASURE_LEDGER_MIGRATIONS } from '@crm/runtime';
import { OUTBOX_MIGRATIONS } from '@crm/messaging';
import { ExportPiece, ExportRecord } from '../exports/export.entity';
import { EventRecord } from '../log/event-record.entity';
import { CreateEventLog1763800001000 } from './migrations/1763800001000-create-event-log';
import { AddLogCheckpoint1763800001100 } from './migrations/1763800001100-add-log-checkpoint';
import { AddEventOrigin1764600000100 } from './migrations/1764600000100-add-event-origin';
import { AddLogAppendFunction1764900000100 } from './migrations/1764900000100-add-log-append-function';
import { AddLogCheckpointStream1766000000200 } from './migrations/1766000000200-add-log-checkpoint-stream';
import { AddLogPrunedThrough1767900000100 } from './migrations/1767900000100-add-log-pruned-through';
import { CreateExports1768500000200 } from './migrations/1768500000200-create-exports';

export const eventsEntities = [EventRecord, ExportRecord, ExportPiece];
export const eventsMigrations = [
  ...OUTBOX_MIGRATIONS,
  CreateEventLog1763800001000,
  AddLogCheckpoint1763800001100,
  AddEventOrigin1764600000100,
  AddLogAppendFunction1764900000100,
  AddLogCheckpointStream1766000000200,
  AddLogPrunedThrough1767900000100,
  ...ERASURE_LEDGER_MIGRATIONS,
  CreateExports1768500000200,
];
