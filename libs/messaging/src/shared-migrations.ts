import { CreateChanges1764600000000 } from './changes/changes.migration';
import { IndexChangesVia1765000000300 } from './changes/changes-via.migration';
import { CreateDeadEvents1763900000000 } from './dead-events/dead-events.migration';
import { AddOutboxTraceContext1764200000000 } from './outbox/outbox-trace.migration';
import { CreateOutbox1763800000000 } from './outbox/outbox.migration';
import { AddOutboxPublished1766000000000, IndexOutboxPublished1766000000100 } from './outbox/outbox-published.migration';
import { CreateRequestOutcomes1763900000200 } from './outcomes/request-outcome';

/**
 * The tables of this library every service that publishes events keeps in its own schema: the outbox, the
 * dead events and the request outcomes. TypeORM runs a service's migrations in the order of their timestamps,
 * so a service lists these beside its own in any order.
 */
export const OUTBOX_MIGRATIONS: Function[] = [
  CreateOutbox1763800000000,
  CreateDeadEvents1763900000000,
  CreateRequestOutcomes1763900000200,
  AddOutboxTraceContext1764200000000,
  AddOutboxPublished1766000000000,
  IndexOutboxPublished1766000000100,
];

/** The change history, for the services that keep records (docs/changes.md). */
export const CHANGE_HISTORY_MIGRATIONS: Function[] = [CreateChanges1764600000000, IndexChangesVia1765000000300];
