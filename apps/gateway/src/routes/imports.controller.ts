import { DomainError, ErrorCode, PageQuery } from '@crm/common';
import { CreateImportQuery, ImportFormat, ImportsRpc, ImportView, RpcRequest } from '@crm/contracts';
import { Controller, Get, HttpCode, Post, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes } from '@nestjs/swagger';
import { contextOf, GatewayRequest } from '../http/request-context';
import { Scopes } from '../http/scopes';
import { UploadError, uploadChunks } from '../imports/upload-rows';
import { ApiPage, ApiResource } from '../openapi/api-docs.decorators';
import { ServiceForwarder } from './service-forwarder';

const FORMATS: Record<string, ImportFormat> = { 'text/csv': 'csv', 'application/x-ndjson': 'ndjson' };

/**
 * Bulk imports, kept by the contacts service. The upload is streamed: rows are parsed as they arrive and
 * staged in the job in chunks that fit a NATS message, so neither side holds the whole file.
 */
@Controller('imports')
export class ImportsController {
  constructor(private readonly forward: ServiceForwarder) {}

  @Post()
  @Scopes('write')
  @HttpCode(202)
  @ApiResource(202, ImportView, { summary: 'Import contacts or companies from CSV or NDJSON (up to 50 MB), applied in the background', query: CreateImportQuery })
  @ApiConsumes('text/csv', 'application/x-ndjson')
  @ApiBody({
    required: true,
    schema: { type: 'string', description: 'CSV: a header line of field names, then one record per line. NDJSON: one JSON object per line, shaped like the create body.' },
  })
  async create(@Req() req: GatewayRequest) {
    const format = FORMATS[(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase()];
    if (!format) {
      throw new DomainError(ErrorCode.UnsupportedMediaType, `Imports are sent as text/csv or application/x-ndjson (got '${req.headers['content-type'] ?? 'none'}').`);
    }
    // The client's Idempotency-Key covers the upload as a whole at the gateway; the calls that stage it are not retries of one another.
    const ctx = { ...contextOf(req), idempotency_ref: undefined };
    const call = (name: string, id: string | undefined, body: unknown, query: Record<string, unknown> = {}) =>
      this.forward.send(name, { ctx, params: id ? { id } : {}, query, body } as RpcRequest, req.traceContext);
    const created = (await call(ImportsRpc.Create, undefined, { format }, { ...(req.query as Record<string, unknown>) })) as { data: ImportView };
    const id = created.data.id;
    try {
      for await (const rows of uploadChunks(req, format)) await call(ImportsRpc.AppendRows, id, { rows });
      if (!req.complete) throw new UploadError('The upload was cut off before its end.');
    } catch (err) {
      const reason = err instanceof UploadError ? err.message : 'The upload could not be staged.';
      await call(ImportsRpc.Fail, id, { reason }).catch(() => undefined);
      if (!(err instanceof UploadError)) throw err;
      throw new DomainError(err.tooLarge ? ErrorCode.PayloadTooLarge : ErrorCode.InvalidRequest, `${err.message} Import '${id}' failed; nothing was applied.`);
    }
    return call(ImportsRpc.Start, id, null);
  }

  @Get()
  @Scopes('read')
  @ApiPage(ImportView, { summary: 'List imports', query: PageQuery })
  list(@Req() req: GatewayRequest) {
    return this.forward.to(ImportsRpc.List, req);
  }

  @Get(':id')
  @Scopes('read')
  @ApiResource(200, ImportView, { summary: 'Get an import: status, progress counts and the first row errors' })
  get(@Req() req: GatewayRequest) {
    return this.forward.to(ImportsRpc.Get, req);
  }
}
