import { AnyOperation, BatchWriteDto, RequestContext } from '@crm/contracts';
import { Controller, Inject, Type } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { Handles } from '@crm/runtime';
import { BatchRunner, BatchWriter } from './batch-runner';

/** What a built-in object's service does the same way whatever the object. */
export interface RecordsService {
  create(ctx: RequestContext, body: never): Promise<unknown>;
  list(query: never): Promise<unknown>;
  remove(ctx: RequestContext, id: string): Promise<void>;
}

export interface RecordsOperations {
  create: AnyOperation;
  list: AnyOperation;
  remove: AnyOperation;
  batch: AnyOperation;
}

/**
 * The handlers of an object's create, list, delete and batch, which differ only in the service, the batch
 * writer and the operations. The object's controller extends it with the handlers of its own (its get and
 * update replies, merges, stage moves); it reaches the service as `records`.
 */
export function recordsController<S extends RecordsService>(service: Type<S>, writer: Type<BatchWriter<object, object, unknown>>, ops: RecordsOperations) {
  @Controller()
  class RecordsController {
    @Inject(service) readonly records!: S;
    @Inject(BatchRunner) readonly batches!: BatchRunner;
    @Inject(writer) readonly batchWriter!: BatchWriter<object, object, unknown>;

    @Handles(ops.batch)
    batch(@Payload('ctx') ctx: RequestContext, @Payload('body') body: BatchWriteDto) {
      return this.batches.run(ctx, body, this.batchWriter);
    }

    @Handles(ops.create)
    async create(@Payload('ctx') ctx: RequestContext, @Payload('body') body: never) {
      return { data: await this.records.create(ctx, body) };
    }

    @Handles(ops.list)
    list(@Payload('query') query: never) {
      return this.records.list(query);
    }

    @Handles(ops.remove)
    async remove(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
      await this.records.remove(ctx, id);
    }
  }
  return RecordsController;
}
