import { Ops, RequestContext, UpdateProductDto } from '@crm/contracts';
import { recordsController } from '@crm/records';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ProductsBatchWriter } from './products.batch';
import { ProductsService } from './products.service';

// Decorated again so its own constructor's parameter types are recorded for injection.
@Controller()
export class ProductsController extends recordsController(ProductsService, ProductsBatchWriter, Ops.products) {
  @Handles(Ops.products.get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.records.get(id) };
  }

  @Handles(Ops.products.update)
  async update(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: UpdateProductDto) {
    return { data: await this.records.update(ctx, id, body) };
  }
}
