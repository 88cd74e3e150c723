import { ErrorCode } from '@crm/common';

/** The one place error codes become HTTP statuses. */
const STATUS: Record<ErrorCode, number> = {
  [ErrorCode.InvalidRequest]: 400,
  [ErrorCode.ValidationFailed]: 400,
  [ErrorCode.QueryTooExpensive]: 400,
  [ErrorCode.Unauthorized]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.MethodNotAllowed]: 405,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.IdempotencyKeyReused]: 422,
  [ErrorCode.PayloadTooLarge]: 413,
  [ErrorCode.UnsupportedMediaType]: 415,
  [ErrorCode.RateLimitExceeded]: 429,
  [ErrorCode.Internal]: 500,
  [ErrorCode.NotImplemented]: 501,
  [ErrorCode.BadGateway]: 502,
  [ErrorCode.ServiceUnavailable]: 503,
};

export function statusFor(code: string): number {
  return STATUS[code as ErrorCode] ?? 500;
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: ErrorCode.InvalidRequest,
  401: ErrorCode.Unauthorized,
  403: ErrorCode.Forbidden,
  404: ErrorCode.NotFound,
  405: ErrorCode.MethodNotAllowed,
  409: ErrorCode.Conflict,
  413: ErrorCode.PayloadTooLarge,
  415: ErrorCode.UnsupportedMediaType,
  422: ErrorCode.IdempotencyKeyReused,
  429: ErrorCode.RateLimitExceeded,
  501: ErrorCode.NotImplemented,
  502: ErrorCode.BadGateway,
  503: ErrorCode.ServiceUnavailable,
};

export function codeForStatus(status: number): ErrorCode {
  return CODE_BY_STATUS[status] ?? (status >= 500 ? ErrorCode.Internal : ErrorCode.InvalidRequest);
}
