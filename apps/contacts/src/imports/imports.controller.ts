import { InputPipe, PageQuery } from '@crm/common';
import { AppendImportRowsRequest, CreateImportQuery, FailImportRequest, ImportFormat, ImportsRpc, RequestContext } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { ImportsService } from './imports.service';

@Controller()
export class ImportsController {
  constructor(private readonly imports: ImportsService) {}

  /** The gateway's first call for an upload: `query.object` as the client sent it, `body.format` from its media type. */
  @MessagePattern(ImportsRpc.Create)
  async create(
    @Payload('ctx') ctx: RequestContext,
    @Payload('query', new InputPipe(CreateImportQuery, 'query')) query: CreateImportQuery,
    @Payload('body') body: { format: ImportFormat },
  ) {
    return { data: await this.imports.create(ctx, { object: query.object, format: body?.format }) };
  }

  @MessagePattern(ImportsRpc.AppendRows)
  async appendRows(@Payload('params') { id }: { id: string }, @Payload('body') body: AppendImportRowsRequest) {
    await this.imports.appendRows(id, body);
  }

  @MessagePattern(ImportsRpc.Start)
  async start(@Payload('params') { id }: { id: string }) {
    return { data: await this.imports.start(id) };
  }

  @MessagePattern(ImportsRpc.Fail)
  async fail(@Payload('params') { id }: { id: string }, @Payload('body') body: FailImportRequest) {
    return { data: await this.imports.fail(id, String(body?.reason ?? 'the upload failed')) };
  }

  @MessagePattern(ImportsRpc.Get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.imports.get(id) };
  }

  @MessagePattern(ImportsRpc.List)
  list(@Payload('query', new InputPipe(PageQuery, 'query')) query: PageQuery) {
    return this.imports.list(query);
  }
}
