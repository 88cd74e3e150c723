import { ErrorCode } from '@crm/common';

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
