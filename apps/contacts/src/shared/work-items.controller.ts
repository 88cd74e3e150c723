import { SortablePageQuery } from '@crm/common';
import { AnyOperation, BatchWriteDto, RequestContext } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { BatchRunner } from '@crm/records';
import { Controller, Inject, Type } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { WorkItemsService, WorkItemTypes } from './work-items.service';

/** A kind's service: the shared work-item operations plus its own filtered list. */
type KindService<T extends WorkItemTypes> = WorkItemsService<T> & { list(query: never): Promise<unknown> };

/** The operations one kind of work item answers: its own routes, and its lists under a contact and a deal. */
export interface WorkItemOperations {
  create: AnyOperation;
  list: AnyOperation;
  get: AnyOperation;
  update: AnyOperation;
  remove: AnyOperation;
  batch: AnyOperation;
  forContact: AnyOperation;
  forDeal: AnyOperation;
}

/** The handlers of activities and of tasks, which differ only in their service and operations. */
export function workItemsController<T extends WorkItemTypes>(service: Type<KindService<T>>, ops: WorkItemOperations): Type {
  @Controller()
  class WorkItemsController {
    constructor(
      @Inject(service) readonly items: KindService<T>,
      @Inject(BatchRunner) readonly batches: BatchRunner,
    ) {}

    @Handles(ops.create)
    async create(@Payload('ctx') ctx: RequestContext, @Payload('body') body: T['create']) {
      return { data: await this.items.create(ctx, body) };
    }

    @Handles(ops.list)
    list(@Payload('query') query: never) {
      return this.items.list(query);
    }

    @Handles(ops.get)
    async get(@Payload('params') { id }: { id: string }) {
      return { data: await this.items.get(id) };
    }

    @Handles(ops.update)
    async update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: T['update']) {
      return { data: await this.items.update(ctx, id, body) };
    }

    @Handles(ops.remove)
    async remove(@Payload('params') { id }: { id: string }) {
      await this.items.remove(id);
    }

    @Handles(ops.batch)
    batch(@Payload('ctx') ctx: RequestContext, @Payload('body') body: BatchWriteDto) {
      return this.batches.run(ctx, body, this.items.batchWriter);
    }

    @Handles(ops.forContact)
    listForContact(@Payload('params') { id }: { id: string }, @Payload('query') query: SortablePageQuery) {
      return this.items.listForContact(id, query);
    }

    @Handles(ops.forDeal)
    listForDeal(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('query') query: SortablePageQuery) {
      return this.items.listForDeal(ctx, id, query);
    }
  }
  return WorkItemsController;
}
