import { awaitStreamCatchUp, MessagingMetrics, MessagingOptions } from '@crm/messaging';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';

/** A service's copy of the event stream: the reader's name and the table holding its checkpoint. */
export interface StreamCopy {
  consumer: string;
  checkpointTable: string;
}

/**
 * How long an erasure waits for a copy of the stream to take in what was published before it. A reader
 * that far behind is stuck or recovering; the erasure goes on, and erasing again later reaches the rest.
 */
export const ERASURE_CATCH_UP_MS = 60_000;

/** Waits until `copy` holds every event the stream holds now, before the step redacts it (stream-catch-up.ts). */
export async function catchUpStreamCopy(
  copy: StreamCopy,
  deps: { dataSource: DataSource; nc: NatsConnection; messaging: MessagingOptions; metrics: MessagingMetrics },
): Promise<void> {
  const caughtUp = await awaitStreamCatchUp({
    nc: deps.nc,
    namespace: deps.messaging.namespace,
    consumer: copy.consumer,
    metrics: deps.metrics,
    timeoutMs: ERASURE_CATCH_UP_MS,
    checkpoint: async () => {
      const [{ seq, stream }] = await deps.dataSource.query(`SELECT stream_seq::text AS seq, stream FROM ${copy.checkpointTable}`);
      return { seq: Number(seq), stream };
    },
  });
  if (!caughtUp) {
    deps.messaging.logger.warn(
      { consumer: copy.consumer },
      'erasure went on before this copy of the event stream caught up; erase again to reach events still on their way',
    );
  }
}
