import { databaseUnavailable, DomainError, ErrorCode, invalidInput, isDataException, isDatabaseUnavailable, Logger, sqlStateOf } from '@crm/common';
import { codeForStatus } from '@crm/contracts';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Inject, NotFoundException } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { LOGGER } from '../tokens';
import { GatewayRequest, pathOf } from './request-context';
import { bodyErrorOf } from './request-body';
import { RouteIndex } from './route-index';
import { methodAllowed, scopeForbidden } from './scopes';
import { writeError } from './write-error';

/**
 * Renders every failure in the spec's error shape; nothing else reaches the client. Nest hands it what a
 * route throws and, through Fastify's error handler, what failed before one ran (reading the body,
 * which Nest passes on as an HttpException with Fastify's status).
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(
    private readonly routes: RouteIndex,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): FastifyReply {
    const http = host.switchToHttp();
    const res = http.getResponse<FastifyReply>();
    const req = http.getRequest<GatewayRequest>();

    if (exception instanceof DomainError) return writeError(res, exception.toBody());
    const path = pathOf(req);

    if (exception instanceof NotFoundException) {
      // Nest raises this only when no route matched. A key is not told about routes its scope could not
      // call by method anyway: it gets the 403 a route would give.
      if (req.principal && !methodAllowed(req.principal, req.method)) return writeError(res, scopeForbidden(req).toBody());
      const allowed = this.routes.allowedMethods(path);
      if (allowed.length) {
        return writeError(
          res,
          { code: ErrorCode.MethodNotAllowed, message: `${req.method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.` },
          { Allow: allowed.join(', ') },
        );
      }
      return writeError(res, { code: ErrorCode.NotFound, message: `No route ${req.method} ${path}.` });
    }

    if (exception instanceof HttpException) {
      // Nest turns what Fastify raised reading a body into one of these too.
      const status = exception.getStatus();
      return writeError(res, bodyErrorOf(status, req) ?? { code: codeForStatus(status), message: exception.message });
    }

    if (isDatabaseUnavailable(exception)) {
      this.logger.warn({ err: exception, request_id: req.id }, 'database unavailable');
      return writeError(res, databaseUnavailable().toBody());
    }
    if (isDataException(exception)) {
      // The client's mistake: a 400. The statement and its parameters (the client's values) stay out of the log.
      this.logger.warn({ sqlstate: sqlStateOf(exception), request_id: req.id }, 'a value in the request failed in the database');
      return writeError(res, invalidInput().toBody());
    }
    this.logger.error({ err: exception, request_id: req.id }, 'unhandled error');
    return writeError(res, { code: ErrorCode.Internal, message: 'An internal error occurred.' });
  }
}
