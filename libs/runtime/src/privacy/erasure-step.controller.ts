import type { ErasureStepReply, ErasureTarget, Operation } from '@crm/contracts';
import { MESSAGING_OPTIONS, MessagingMetrics, MessagingOptions, NATS_CONNECTION } from '@crm/messaging';
import { Controller, Inject, Module, Type } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { NatsConnection } from 'nats';
import { DataSource } from 'typeorm';
import { Handles } from '../handles';
import { ErasureRuns } from './erasure-runs';
import { ErasureDeclaration, runErasureStores } from './erasure-stores';
import { catchUpStreamCopy } from './stream-copy';

/**
 * A service's part of an erasure (docs/privacy.md): the module answering `op` by running the stores the
 * service declares, after its copy of the event stream (if it keeps one) has caught up.
 */
export function erasureStepModule(
  op: Operation<Record<never, string>, Record<string, never>, ErasureTarget, ErasureStepReply>,
  declaration: ErasureDeclaration,
): Type<unknown> {
  @Controller()
  class ErasureStepController {
    private readonly runs = new ErasureRuns();

    constructor(
      @Inject(DataSource) private readonly dataSource: DataSource,
      @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
      @Inject(MESSAGING_OPTIONS) private readonly messaging: MessagingOptions,
      @Inject(MessagingMetrics) private readonly metrics: MessagingMetrics,
    ) {}

    @Handles(op)
    step(@Payload('body') target: ErasureTarget): Promise<ErasureStepReply> {
      return this.runs.run(target, async () => {
        if (declaration.streamCopy)
          await catchUpStreamCopy(declaration.streamCopy, { dataSource: this.dataSource, nc: this.nc, messaging: this.messaging, metrics: this.metrics });
        return { stores: (await runErasureStores(this.dataSource, declaration, target)).stores };
      });
    }
  }
  @Module({ controllers: [ErasureStepController] })
  class ErasureStepModule {}
  return ErasureStepModule;
}
