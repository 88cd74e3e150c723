import { DomainError, ErrorCode } from '@crm/common';
import type { ImportRowError } from '@crm/contracts';

/**
 * The errors of an import row the data was refused for: a rule of the API (a DomainError), or PostgreSQL
 * refusing the value (SQLSTATE classes 22 and 23). Undefined for anything else (the database going away),
 * which must fail the whole batch so it is retried rather than recorded against the row.
 */
export function importRowErrors(line: number, err: unknown): ImportRowError[] | undefined {
  if (err instanceof DomainError) {
    if (!err.details?.length) return [{ line, field: null, code: err.code, message: err.message }];
    return err.details.map((d) => ({ line, field: d.field, code: d.code, message: d.message }));
  }
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && /^2[23]/.test(code)) return [{ line, field: null, code: ErrorCode.InvalidRequest, message: (err as Error).message }];
  return undefined;
}
