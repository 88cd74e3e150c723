import { ErrorCode } from '@crm/common';
import { AnyOperation, BatchLimits, Ops } from '@crm/contracts';
import express, { NextFunction, Request, RequestHandler, Response } from 'express';
import { inputProblems } from './input-limits';
import { writeError } from './write-error';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/** `POST /contacts/batch`, `/objects/:slug/records/batch`…: the routes whose bodies may be BatchLimits.bodyBytes. */
const BATCH_PATHS = Object.values(Ops)
  .flatMap((group) => Object.values(group as Record<string, AnyOperation>))
  .filter((op) => op.reply.kind === 'batch' && op.http)
  .map((op) => new RegExp(`^${op.http!.path.replace(/:[a-z_]+/g, '[^/]+')}$`));

export function isBatchWrite(req: Request): boolean {
  return req.method === 'POST' && BATCH_PATHS.some((path) => path.test(req.path));
}

function isImportUpload(req: Request): boolean {
  return req.method === 'POST' && req.path === '/imports' && Boolean(req.is('text/csv') || req.is('application/x-ndjson'));
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Parses JSON request bodies up to 1 MiB (batch writes up to BatchLimits.bodyBytes) and checks bodies and query strings against InputLimits.
 * Malformed JSON, other media types, oversized bodies and inputs over a limit answer in the spec's error
 * shape before any route runs.
 */
export function jsonBody(): RequestHandler {
  const parse = express.json({ limit: BODY_LIMIT_BYTES, strict: false, type: () => true });
  const parseBatch = express.json({ limit: BatchLimits.bodyBytes, strict: false, type: () => true });
  const checked = (value: unknown, res: Response, next: NextFunction) => {
    const issues = inputProblems(value);
    if (!issues.length) return next();
    return writeError(res, { code: ErrorCode.ValidationFailed, message: issues.map((issue) => issue.message).join('; '), details: issues });
  };
  return (req: Request, res: Response, next: NextFunction) => {
    if (!hasBody(req)) return checked(req.query, res, next);
    // An import is streamed by its route (up to 50 MB of CSV or NDJSON), not parsed here.
    if (isImportUpload(req)) return checked(req.query, res, next);
    if (!req.is('application/json') && !req.is('application/*+json')) {
      return writeError(res, {
        code: ErrorCode.UnsupportedMediaType,
        message: `Request bodies must be JSON sent with Content-Type: application/json (got '${req.headers['content-type'] ?? 'none'}').`,
      });
    }
    const batch = isBatchWrite(req);
    (batch ? parseBatch : parse)(req, res, (err?: { type?: string; message?: string }) => {
      if (!err) return checked(req.body, res, () => checked(req.query, res, next));
      switch (err.type) {
        case 'entity.too.large':
          return writeError(res, { code: ErrorCode.PayloadTooLarge, message: `Request body exceeds the ${batch ? BatchLimits.bodyBytes : BODY_LIMIT_BYTES} byte limit.` });
        case 'entity.parse.failed':
          return writeError(res, { code: ErrorCode.InvalidRequest, message: `Malformed JSON in request body: ${err.message}` });
        case 'encoding.unsupported':
        case 'charset.unsupported':
          return writeError(res, { code: ErrorCode.UnsupportedMediaType, message: err.message ?? 'Unsupported body encoding.' });
        default:
          return writeError(res, { code: ErrorCode.InvalidRequest, message: err.message ?? 'The request body could not be read.' });
      }
    });
  };
}
