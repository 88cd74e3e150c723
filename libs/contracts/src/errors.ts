/** Error codes a client can see in `{error: {code, message}}`. HTTP statuses are assigned at the gateway only. */
export const ErrorCode = {
  InvalidRequest: 'invalid_request',
  ValidationFailed: 'validation_failed',
  Unauthorized: 'unauthorized',
  Forbidden: 'forbidden',
  NotFound: 'not_found',
  MethodNotAllowed: 'method_not_allowed',
  Conflict: 'conflict',
  /** An Idempotency-Key already used with a different request. */
  IdempotencyKeyReused: 'idempotency_key_reused',
  PayloadTooLarge: 'payload_too_large',
  UnsupportedMediaType: 'unsupported_media_type',
  /** A `Range` that does not fit the file asked for (an export's file). */
  RangeNotSatisfiable: 'range_not_satisfiable',
  RateLimitExceeded: 'rate_limit_exceeded',
  Internal: 'internal_error',
  NotImplemented: 'not_implemented',
  BadGateway: 'bad_gateway',
  ServiceUnavailable: 'service_unavailable',
  /** A query ran past its time budget: it cannot use an index, or asks for too much at once. */
  QueryTooExpensive: 'query_too_expensive',
  /** A cursor (or a replay's starting point) before what retention has kept: what follows it is gone. */
  CursorExpired: 'cursor_expired',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * The one place error codes become HTTP statuses (the gateway's answers, and a batch item's status), and
 * statuses codes (a framework's error with only a status): the first code listed for a status is its code.
 */
const HTTP_STATUS: Record<ErrorCode, number> = {
  [ErrorCode.InvalidRequest]: 400,
  [ErrorCode.ValidationFailed]: 400,
  [ErrorCode.QueryTooExpensive]: 400,
  [ErrorCode.Unauthorized]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.MethodNotAllowed]: 405,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.CursorExpired]: 410,
  [ErrorCode.IdempotencyKeyReused]: 422,
  [ErrorCode.PayloadTooLarge]: 413,
  [ErrorCode.UnsupportedMediaType]: 415,
  [ErrorCode.RangeNotSatisfiable]: 416,
  [ErrorCode.RateLimitExceeded]: 429,
  [ErrorCode.Internal]: 500,
  [ErrorCode.NotImplemented]: 501,
  [ErrorCode.BadGateway]: 502,
  [ErrorCode.ServiceUnavailable]: 503,
};

export function httpStatusOf(code: string): number {
  return HTTP_STATUS[code as ErrorCode] ?? 500;
}

const CODE_BY_STATUS: ReadonlyMap<number, ErrorCode> = new Map(
  (Object.entries(HTTP_STATUS) as Array<[ErrorCode, number]>).reverse().map(([code, status]) => [status, code]),
);

/** The code of an error known only by its HTTP status; an unknown status is a 5xx's `internal_error` or a 4xx's `invalid_request`. */
export function codeForStatus(status: number): ErrorCode {
  return CODE_BY_STATUS.get(status) ?? (status >= 500 ? ErrorCode.Internal : ErrorCode.InvalidRequest);
}

/** One problem with one input field. `code` is machine-readable, e.g. `required`, `unknown_field`, `invalid_value`. */
export interface FieldIssue {
  field: string;
  code: string;
  message: string;
}

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: FieldIssue[];
}

/**
 * A failure the client caused or must know about. Services throw it; it crosses NATS as data and the
 * gateway renders it. It carries no HTTP types, so domain code stays transport-free.
 */
export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldIssue[],
  ) {
    super(message);
    this.name = 'DomainError';
  }

  toBody(): ErrorBody {
    return this.details?.length ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }

  static notFound(resource: string, id: string): DomainError {
    return new DomainError(ErrorCode.NotFound, `No ${resource} with id '${id}'.`);
  }

  static invalid(field: string, message: string, code = 'invalid_value'): DomainError {
    return new DomainError(ErrorCode.ValidationFailed, message, [{ field, code, message }]);
  }

  static conflict(message: string, details?: FieldIssue[]): DomainError {
    return new DomainError(ErrorCode.Conflict, message, details);
  }
}

export function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === 'object' && value !== null && typeof (value as ErrorBody).code === 'string' && typeof (value as ErrorBody).message === 'string';
}
