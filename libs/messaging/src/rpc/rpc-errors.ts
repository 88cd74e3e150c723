import {
  databaseUnavailable,
  DomainError,
  ErrorBody,
  ErrorCode,
  invalidInput,
  isDataException,
  isDatabaseUnavailable,
  isErrorBody,
  Logger,
  sqlStateOf,
} from '@crm/common';
import { RpcRequest } from '@crm/contracts';
import { ArgumentsHost, Catch, HttpServer } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { NO_MESSAGE_HANDLER } from '@nestjs/microservices/constants';
import { Observable, throwError } from 'rxjs';

const KNOWN_CODES = new Set<string>(Object.values(ErrorCode));

/**
 * The service side of error transport: a DomainError crosses NATS as its `{code, message, details}`
 * body; anything else is logged here, with the request id, and crosses as a bare internal error so no
 * stack trace or driver message reaches a client; a database outage crosses as 503 service_unavailable. Registered application-wide in each service (which
 * also serves /health over HTTP), so HTTP exceptions keep Nest's default handling.
 */
@Catch()
export class RpcErrorFilter extends BaseExceptionFilter {
  constructor(
    private readonly logger: Logger,
    httpAdapter?: HttpServer,
  ) {
    super(httpAdapter);
  }

  override catch(exception: unknown, host: ArgumentsHost): Observable<never> | void {
    if (host.getType() !== 'rpc') return super.catch(exception, host);
    if (exception instanceof DomainError) return throwError(() => exception.toBody());
    const rpc = host.switchToRpc();
    const request = rpc.getData<Partial<RpcRequest> | undefined>();
    if (isDatabaseUnavailable(exception)) {
      // An outage, not a bug: the caller gets 503 with Retry-After and tries again.
      this.logger.warn({ err: exception, request_id: request?.ctx?.request_id }, 'database unavailable');
      return throwError(() => databaseUnavailable().toBody());
    }
    const subject = rpc.getContext<{ getSubject?: () => string }>()?.getSubject?.();
    if (isDataException(exception)) {
      // The client's mistake: a 400. The statement and its parameters (the client's values) stay out of the log.
      this.logger.warn(
        { sqlstate: sqlStateOf(exception), rpc: subject, request_id: request?.ctx?.request_id },
        'a value in the request failed in the database',
      );
      return throwError(() => invalidInput().toBody());
    }
    this.logger.error({ err: exception, rpc: subject, request_id: request?.ctx?.request_id }, 'unhandled error in rpc handler');
    const body: ErrorBody = { code: ErrorCode.Internal, message: 'An internal error occurred.' };
    return throwError(() => body);
  }
}

export function serviceUnavailable(message: string): DomainError {
  return new DomainError(ErrorCode.ServiceUnavailable, message);
}

/**
 * The caller side: whatever a ClientProxy request failed with, as the DomainError the gateway renders
 * (or a calling service rethrows). `service` names the callee in messages.
 */
export function toDomainError(err: unknown, service: string): DomainError {
  if (err instanceof DomainError) return err;
  if (isErrorBody(err) && KNOWN_CODES.has(err.code)) return new DomainError(err.code, err.message, err.details);
  if (err === NO_MESSAGE_HANDLER) return new DomainError(ErrorCode.NotImplemented, 'This operation is not implemented yet.');
  const reason = err instanceof Error ? err.message : typeof err === 'string' ? err : 'unknown error';
  return serviceUnavailable(`The ${service} service could not be reached (${reason}); try again shortly.`);
}
