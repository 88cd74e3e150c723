import { Logger } from '@crm/common';
import { RequestMethod } from '@nestjs/common';
import { randomUUID } from 'crypto';
import type { IncomingMessage, ServerResponse } from 'http';
import type { Params } from 'nestjs-pino';
import { Principal } from './request-context';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's `genReqId`: the client's X-Request-Id when well formed, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The gateway's request log through nestjs-pino: one line per request with its id (the client's
 * X-Request-Id when well formed, else a new one, echoed back), method, path, status, time and the key id,
 * and that request-bound logger for Nest's own lines during the request. Only those fields are
 * serialised: no headers, so no credentials, and less work per request.
 */
function withKeyId(req: IncomingMessage, line: object): object {
  const principal = (req as IncomingMessage & { principal?: Principal }).principal;
  if (principal?.keyId !== undefined) return { ...line, key_id: principal.keyId };
  // A bearer token's subject names the caller; the token itself is never written anywhere.
  return principal?.subject === undefined ? line : { ...line, subject: principal.subject };
}

export function requestLogParams(logger: Logger): Params {
  return {
    pinoHttp: {
      logger,
      wrapSerializers: false,
      serializers: {
        // originalUrl: the middleware layer strips the matched path from `url`.
        req: (req: IncomingMessage & { id?: unknown; originalUrl?: string }) => ({ id: req.id, method: req.method, url: req.originalUrl ?? req.url }),
        res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      },
      // The key is known only once the access check has run, so it goes on the finished line itself
      // rather than through customProps, which would build two extra child loggers for every request.
      customSuccessObject: (req, _res, line) => withKeyId(req, line),
      customErrorObject: (req, _res, _err, line) => withKeyId(req, line),
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    },
    forRoutes: [{ path: '{*splat}', method: RequestMethod.ALL }],
  };
}
