import { DomainError, ErrorBody, ErrorCode } from '@crm/common';
import { AnyOperation, BatchLimits, Ops } from '@crm/contracts';
import type { FastifyBodyParser, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { inputProblems } from './input-limits';
import { writeError } from './write-error';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** The operations that write a batch of items over HTTP; some are MCP tools too. */
export const BATCH_WRITES: readonly AnyOperation[] = Object.values(Ops)
  .flatMap((group) => Object.values(group as Record<string, AnyOperation>))
  .filter((op) => op.reply.kind === 'batch' && op.http);

/** `POST /contacts/batch`, `/objects/:slug/records/batch`…: the routes whose bodies may be BatchLimits.bodyBytes. */
const BATCH_ROUTES = new Set(BATCH_WRITES.map((op) => op.http!.path));

const IMPORT_ROUTE = '/imports';
const UPLOAD_TYPES = ['text/csv', 'application/x-ndjson'];
const NOT_UTF8 = /;\s*charset\s*=\s*(?!"?utf-?8"?\s*(;|$))/i;

export function isBatchWrite(req: FastifyRequest): boolean {
  return req.method === 'POST' && BATCH_ROUTES.has(req.routeOptions.url ?? '');
}

/** The request's JSON body, or undefined: an import upload's body is the raw request, a stream its route reads. */
export function jsonBodyOf(req: FastifyRequest): unknown {
  return req.body === req.raw ? undefined : req.body;
}

const unsupported = (message: string) => new DomainError(ErrorCode.UnsupportedMediaType, message);

/**
 * Body parsing on Fastify, which reads a body only after the onRequest hooks (the key check and rate
 * limit) let the request through:
 * - JSON (`application/json`, `application/*+json`), up to 1 MiB, or BatchLimits.bodyBytes on a batch
 *   route; plain JSON.parse, so a `__proto__` key is an own key that the input check then refuses;
 * - an import upload (CSV or NDJSON on POST /imports) is handed to its route as the raw stream, which
 *   it parses as it arrives (up to 50 MB), and is refused on any other route;
 * - any other media type, a compressed body, or a charset other than UTF-8 is 415, in the API's error
 *   shape like every failure here (see bodyErrorOf).
 */
export function installBodyParsers(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    if ([route.method].flat().includes('POST') && BATCH_ROUTES.has(route.url)) route.bodyLimit = BatchLimits.bodyBytes;
  });
  fastify.addHook('preParsing', (req, _reply, payload, done) => {
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
      return done(unsupported(`Content-Encoding '${encoding}' is not supported: send the body uncompressed.`));
    }
    done(null, payload);
  });
  fastify.removeAllContentTypeParsers();
  const parseJson: FastifyBodyParser<string> = (req, text, done) => {
    const type = req.headers['content-type'] ?? '';
    if (NOT_UTF8.test(type)) return done(unsupported(`Unsupported charset in '${type}': JSON bodies are UTF-8.`), undefined);
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (err) {
      done(new DomainError(ErrorCode.InvalidRequest, `Malformed JSON in request body: ${(err as Error).message}`), undefined);
    }
  };
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, parseJson);
  fastify.addContentTypeParser(/^application\/[^;\s]+\+json(;|$)/i, { parseAs: 'string' }, parseJson);
  fastify.addContentTypeParser(UPLOAD_TYPES, (req, payload, done) => {
    if (req.method === 'POST' && req.routeOptions.url === IMPORT_ROUTE) return done(null, payload);
    done(unsupported(`${req.headers['content-type']} is accepted only by POST ${IMPORT_ROUTE}; other request bodies are JSON.`), undefined);
  });
}

/** The API's answer to a body Fastify refused (by the status it refused it with), or undefined. */
export function bodyErrorOf(status: number, req: FastifyRequest): ErrorBody | undefined {
  if (status === 413)
    return { code: ErrorCode.PayloadTooLarge, message: `Request body exceeds the ${req.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES} byte limit.` };
  if (status === 415) {
    return {
      code: ErrorCode.UnsupportedMediaType,
      message: `Request bodies must be JSON sent with Content-Type: application/json (got '${req.headers['content-type'] ?? 'none'}').`,
    };
  }
  return undefined;
}

/**
 * A `preValidation` hook: checks the parsed body, the query string and the path parameters (a `%00`
 * decodes to a NUL) against InputLimits before any route, the batch cost or the idempotency check reads them.
 */
export function checkInput(req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const issues = inputProblems(jsonBodyOf(req));
  if (issues.length === 0) issues.push(...inputProblems(req.query));
  if (issues.length === 0) issues.push(...inputProblems(req.params));
  if (!issues.length) return done();
  writeError(reply, { code: ErrorCode.ValidationFailed, message: issues.map((issue) => issue.message).join('; '), details: issues });
}
