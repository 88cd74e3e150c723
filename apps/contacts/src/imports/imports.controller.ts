import { SortablePageQuery } from '@crm/common';
import { AppendImportRowsRequest, CreateImportQuery, FailImportRequest, ImportFormat, Ops, RequestContext } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { ImportsService } from './imports.service';

@Controller()
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  /** The gateway's first call for an upload: `query.object` as the client sent it, `body.format` from its media type. */
  @Handles(Ops.imports.create)
  async create(@Payload('ctx') ctx: RequestContext, @Payload('query') query: CreateImportQuery, @Payload('body') body: { format: ImportFormat }) {
    return { data: await this.imports.create(ctx, { object: query.object, format: body?.format }) };
  }

  @Handles(Ops.importSteps.appendRows)
  async appendRows(@Payload('params') { id }: { id: string }, @Payload('body') body: AppendImportRowsRequest) {
    await this.imports.appendRows(id, body);
  }

  @Handles(Ops.importSteps.start)
  async start(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
    return { data: await this.imports.start(ctx, id) };
  }

  @Handles(Ops.importSteps.fail)
  async fail(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }, @Payload('body') body: FailImportRequest) {
    return { data: await this.imports.fail(ctx, id, String(body?.reason ?? 'the upload failed')) };
  }

  @Handles(Ops.imports.get)
  async get(@Payload('ctx') ctx: RequestContext, @Payload('params') { id }: { id: string }) {
    return { data: await this.imports.get(ctx, id) };
  }

  @Handles(Ops.imports.list)
  list(@Payload('ctx') ctx: RequestContext, @Payload('query') query: SortablePageQuery) {
    return this.imports.list(ctx, query);
  }
}
