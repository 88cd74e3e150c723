import { DomainError, ErrorCode, Logger } from '@crm/common';
import { ExportLimits, exportFileType, Ops } from '@crm/contracts';
import { RpcCaller } from '@crm/messaging';
import { Controller, Inject, Param, Req, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Readable } from 'node:stream';
import { callerOf, contextOf, GatewayRequest } from '../http/request-context';
import { GatewayMetrics } from '../metrics/gateway-metrics';
import { RateLimiterService, setRateLimitHeaders } from '../rate-limit/rate-limiter.service';
import { Route } from '../routes/route.decorator';
import { LOGGER } from '../tokens';

/** Rows one token pays for: a query's page, what reading them with POST /<object>/query would cost. */
const ROWS_PER_TOKEN = 200;

/** `bytes=a-b`, `bytes=a-` or `bytes=-n` within a file of `size` bytes: the first and last byte, or why not. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | undefined {
  if (header === undefined) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  const unsatisfiable = (why: string) =>
    new DomainError(ErrorCode.RangeNotSatisfiable, `Range '${header.slice(0, 100)}' ${why}; the file has ${size} bytes (send bytes=<first>-<last>).`, [
      { field: 'Range', code: 'invalid_value', message: why },
    ]);
  if (!match || (match[1] === '' && match[2] === '')) throw unsatisfiable('is not a single byte range');
  if (match[1] === '') {
    const suffix = Math.min(Number(match[2]), size);
    if (suffix === 0) throw unsatisfiable('asks for no bytes');
    return { start: size - suffix, end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) throw unsatisfiable('starts past the end of the file or ends before it starts');
  return { start, end };
}

/**
 * GET /exports/:id/files/:name: streams a file of an export from the events service, piece by piece, so the
 * gateway holds one piece at a time whatever the file's size; `Range` answers 206 with the bytes asked for.
 * Reading costs tokens for the rows the bytes hold, like a batch (docs/exports.md, "Limits and cost").
 */
@Controller()
export class ExportFilesController {
  constructor(
    private readonly rpc: RpcCaller,
    private readonly limiter: RateLimiterService,
    private readonly metrics: GatewayMetrics,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Route(Ops.exports.file)
  async file(@Req() req: GatewayRequest, @Res() reply: FastifyReply, @Param('id') id: string, @Param('name') name: string): Promise<void> {
    const ctx = { ...contextOf(req), idempotency_ref: undefined };
    const trace = { trace: req.traceContext };
    const head = await this.rpc.call(Ops.exportSteps.read, ctx, { body: { id, name, offset: 0, length: 0 } }, trace);
    const range = parseRange(req.headers.range, head.bytes);
    const start = range?.start ?? 0;
    const end = range?.end ?? head.bytes - 1;
    if (!(await this.charge(req, reply, head.bytes ? Math.ceil((head.rows * (end - start + 1)) / head.bytes) : 0))) return;
    reply.header('Content-Type', exportFileType(name));
    reply.header('Accept-Ranges', 'bytes');
    reply.header('ETag', `"${head.sha256}"`);
    reply.header('Content-Length', String(Math.max(0, end - start + 1)));
    if (range) reply.code(206).header('Content-Range', `bytes ${start}-${end}/${head.bytes}`);
    else reply.code(200);
    const rpc = this.rpc;
    async function* pieces() {
      for (let offset = start; offset <= end; offset += ExportLimits.pieceBytes) {
        const length = Math.min(ExportLimits.pieceBytes, end - offset + 1);
        const piece = await rpc.call(Ops.exportSteps.read, ctx, { body: { id, name, offset, length } }, trace);
        yield Buffer.from(piece.data, 'base64');
      }
    }
    await reply.send(Readable.from(pieces()));
  }

  /** Takes the tokens `rows` cost beyond the one the request already paid; false (with the 429 sent) when the bucket lacks them. */
  private async charge(req: GatewayRequest, reply: FastifyReply, rows: number): Promise<boolean> {
    const extra = Math.min(Math.ceil(rows / ROWS_PER_TOKEN), this.limiter.capacity) - 1;
    if (!req.principal || extra <= 0) return true;
    const decision = await this.limiter.take(callerOf(req.principal), extra);
    setRateLimitHeaders(reply, decision);
    if (decision.allowed) return true;
    this.metrics.rateLimited.inc();
    const s = decision.retryAfterSeconds;
    this.logger.debug({ request_id: req.id, rows }, 'export file refused by the rate limit');
    await reply
      .code(429)
      .header('Retry-After', String(s))
      .send({
        error: {
          code: ErrorCode.RateLimitExceeded,
          message: `Rate limit exceeded: ${rows} rows cost ${extra + 1} requests; retry in ${s} second${s === 1 ? '' : 's'}.`,
        },
      });
    return false;
  }
}
