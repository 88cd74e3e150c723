import type { ErasureStepReply, ErasureTarget, Operation } from '@crm/contracts';
import { Controller, Inject, Module, Type } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { DataSource } from 'typeorm';
import { Handles } from '../handles';
import { ErasureRuns } from './erasure-runs';
import { ErasureDeclaration, runErasureStores, toRanges } from './erasure-stores';

/**
 * A service's part of an erasure (docs/privacy.md): the module answering `op` by running the stores
 * the service declares. `logStore` names the store whose keys are event-log positions (the receipt's ranges).
 */
export function erasureStepModule(
  op: Operation<Record<never, string>, Record<string, never>, ErasureTarget, ErasureStepReply>,
  declaration: ErasureDeclaration,
  logStore?: string,
): Type<unknown> {
  @Controller()
  class ErasureStepController {
    private readonly runs = new ErasureRuns();

    constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

    @Handles(op)
    step(@Payload('body') target: ErasureTarget): Promise<ErasureStepReply> {
      return this.runs.run(target, async () => {
        const { stores, positions } = await runErasureStores(this.dataSource, declaration, target);
        return { stores, ...(logStore ? { event_log_ranges: toRanges(positions[logStore] ?? []) } : {}) };
      });
    }
  }
  @Module({ controllers: [ErasureStepController] })
  class ErasureStepModule {}
  return ErasureStepModule;
}
