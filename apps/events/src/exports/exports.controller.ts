import { CreateExportDto, Ops, ReadExportFileRequest, RequestContext } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ExportsService } from './exports.service';

@Controller()
export class ExportsController {
  constructor(private readonly exports: ExportsService) {}

  @Handles(Ops.exports.create)
  create(@Payload('ctx') ctx: RequestContext, @Payload('body') body: CreateExportDto) {
    return this.exports.create(ctx, body);
  }

  @Handles(Ops.exports.get)
  get(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
    return this.exports.get(ctx, id);
  }

  @Handles(Ops.exportSteps.read)
  read(@Payload('ctx') ctx: RequestContext, @Payload('body') body: ReadExportFileRequest) {
    return this.exports.read(ctx, body);
  }
}
