import { DomainError, ErrorCode } from '@crm/common';
import { firstUngranted, permits } from '@crm/contracts';

/**
 * Who makes or revokes a key over the API, and so bounds what that key may hold: a key or a token can
 * hand on only what it holds itself (docs/api.md, "API keys"). The command-line tool has none: the
 * operator is bound by nothing.
 */
export interface Grantor {
  /** `token` for a bearer token's subject, `key` for an API key: the refusals name which. */
  caller: 'key' | 'token';
  permissions: readonly string[];
  /** The team member the caller acts as, if any. */
  userId?: string;
  /** When the caller's bearer token expires; a key it makes may not outlive it. */
  expiresAt?: Date;
}

const missing = (permission: string, message: string) =>
  new DomainError(ErrorCode.Forbidden, message, [{ field: 'permission', code: 'missing_permission', message: permission }]);

/** 403 when the new key would hold a permission the caller lacks, or act for a user the caller may not name. */
export function checkGrant(grantor: Grantor, wanted: readonly string[], userId: string | undefined): void {
  const lacking = firstUngranted(grantor.permissions, wanted);
  if (lacking) {
    throw missing(lacking, `This ${grantor.caller} lacks the permission ${lacking}, so it cannot create a key that holds it.`);
  }
  if (userId !== undefined && userId !== grantor.userId && !permits(grantor.permissions, 'users', 'write')) {
    throw missing('users:write', `This ${grantor.caller} lacks the permission users:write, which a key for another user (user_id) needs.`);
  }
}

/**
 * The new key's expiry under a token's: the token's when none is asked for, 403 when a later one is.
 * A key made with an API key may be given any expiry.
 */
export function expiryWithin(grantor: Grantor | undefined, asked: Date | null): Date | null {
  const ceiling = grantor?.expiresAt;
  if (!ceiling) return asked;
  if (asked === null) return ceiling;
  if (asked.getTime() > ceiling.getTime()) {
    const message = `expires_at must not be later than this token's expiry (${ceiling.toISOString()}): a key made with a token cannot outlive it.`;
    throw new DomainError(ErrorCode.Forbidden, message, [{ field: 'expires_at', code: 'beyond_token_expiry', message }]);
  }
  return asked;
}

/** 403 when the key to revoke holds a permission the caller lacks: a narrower key cannot cut off a broader one. */
export function checkRevoke(grantor: Grantor, held: readonly string[]): void {
  const lacking = firstUngranted(grantor.permissions, held);
  if (lacking) throw missing(lacking, `This ${grantor.caller} lacks the permission ${lacking}, which the key it would revoke holds.`);
}
