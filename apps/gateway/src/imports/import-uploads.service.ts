import { DomainError, ErrorCode } from '@crm/common';
import { CreateImportQuery, IMPORT_OBJECTS, ImportFormat, ImportView, objectResource, Ops, permits, RequiredPermission, ResourceOf } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { contextOf, GatewayRequest } from '../http/request-context';
import { scopeForbidden } from '../http/scopes';
import { UploadError, uploadChunks } from './upload-rows';

/** A Map, as the client names the key: `Content-Type: constructor` must not find Object's own properties. */
const FORMATS = new Map<string, ImportFormat>([
  ['text/csv', 'csv'],
  ['application/x-ndjson', 'ndjson'],
]);

/**
 * Streams an upload into an import job kept by the contacts service: rows are parsed as they arrive and
 * staged in chunks that fit a NATS message, so neither side holds the whole file; then the job is started,
 * or failed with nothing applied when the upload broke off or was malformed.
 */
@Injectable()
export class ImportUploads {
  constructor(private readonly rpc: RpcCaller) {}

  async receive(req: GatewayRequest): Promise<ResourceOf<ImportView>> {
    const lacking = this.lackingWrite(req);
    if (lacking) throw scopeForbidden(req, lacking);
    const format = FORMATS.get((req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase());
    if (!format) {
      throw new DomainError(
        ErrorCode.UnsupportedMediaType,
        `Imports are sent as text/csv or application/x-ndjson (got '${req.headers['content-type'] ?? 'none'}').`,
      );
    }
    // The client's Idempotency-Key covers the upload as a whole at the gateway; the calls that stage it are not retries of one another.
    const ctx = { ...contextOf(req), idempotency_ref: undefined };
    const trace = { trace: req.traceContext };
    // Forwarded as the client sent it: the contacts service validates it against CreateImportQuery.
    const created = await this.rpc.call(Ops.imports.create, ctx, { query: req.query as CreateImportQuery, body: { format } }, trace);
    const id = created.data.id;
    try {
      for await (const rows of uploadChunks(req.raw, format)) await this.rpc.call(Ops.importSteps.appendRows, ctx, { params: { id }, body: { rows } }, trace);
      if (!req.raw.complete) throw new UploadError('The upload was cut off before its end.');
    } catch (err) {
      const reason = err instanceof UploadError ? err.message : 'The upload could not be staged.';
      await this.rpc.call(Ops.importSteps.fail, ctx, { params: { id }, body: { reason } }, trace).catch(() => undefined);
      if (!(err instanceof UploadError)) throw err;
      throw new DomainError(err.tooLarge ? ErrorCode.PayloadTooLarge : ErrorCode.InvalidRequest, `${err.message} Import '${id}' failed; nothing was applied.`);
    }
    return this.rpc.call(Ops.importSteps.start, ctx, { params: { id } }, trace);
  }

  /**
   * Every row is a write of the object (an upsert for contacts and companies), so `imports:write`, which
   * the route checks, is not enough alone: the caller must also hold write on the object's own resource.
   * An object that is not importable is left to the contacts service, which names `object` in its 400.
   */
  private lackingWrite(req: GatewayRequest): RequiredPermission | undefined {
    const object = (req.query as { object?: unknown } | undefined)?.object;
    if (typeof object !== 'string' || !(IMPORT_OBJECTS as readonly string[]).includes(object)) return undefined;
    const needed: RequiredPermission = { resource: objectResource(object), action: 'write' };
    return permits(req.principal?.permissions ?? [], needed.resource, needed.action) ? undefined : needed;
  }
}
