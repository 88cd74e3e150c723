import { DomainError, ErrorCode } from '@crm/contracts';
import { createHmac, timingSafeEqual } from 'crypto';
import { IdPrefix } from './ids';

/**
 * Cursors are opaque to clients: base64url JSON naming the list they belong to and the sort key of the
 * last item served, then `.` and an HMAC-SHA256 of that text under the deployment's cursor secret. A
 * cursor the server did not issue (forged, edited, from another deployment or an older build) is refused
 * before anything in it is read, and what a genuine one carries is checked against its type again, so
 * that no cursor value ever reaches SQL that could fail on it.
 */
export class CursorCodec {
  private readonly keys: readonly Buffer[];

  /** `secrets`: the current one signs; every one verifies, so a secret can be replaced without refusing the cursors already out. */
  constructor(secrets: readonly string[]) {
    if (!secrets.length) throw new Error('a cursor codec needs at least one secret');
    this.keys = secrets.map((secret) => Buffer.from(secret, 'utf8'));
  }

  encode(list: string, key: unknown): string {
    const body = Buffer.from(JSON.stringify({ l: list, k: key }), 'utf8').toString('base64url');
    return `${body}.${mac(this.keys[0], body).toString('base64url')}`;
  }

  /** The key a cursor of `list` carries, when it is one this deployment issued and `fits` accepts it; undefined for no cursor. */
  decode<K>(list: string, raw: string | undefined, fits: (key: unknown) => key is K): K | undefined {
    if (raw === undefined || raw === '') return undefined;
    const shape = CURSOR_SHAPE.exec(raw);
    if (!shape) throw invalidCursor();
    const [, body, tag] = shape;
    const given = Buffer.from(tag, 'base64url');
    if (!this.keys.some((key) => timingSafeEqual(mac(key, body), given))) throw invalidCursor();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw invalidCursor();
    }
    const cursor = parsed as { l?: unknown; k?: unknown } | null;
    if (typeof cursor !== 'object' || cursor === null || cursor.l !== list || !fits(cursor.k)) throw invalidCursor();
    return cursor.k;
  }
}

/** A signed cursor: the body, then 43 characters of SHA-256 MAC (32 bytes in base64url). */
const CURSOR_SHAPE = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/;

const mac = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest();

export function invalidCursor(message = 'cursor is not valid for this list'): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, message, [{ field: 'cursor', code: 'invalid_cursor', message }]);
}

/*
 * What a cursor's key may be, checked after its signature: a genuine cursor always passes, and a value a
 * server bug let through still cannot reach SQL that fails on it.
 */

const ID_SHAPE = /^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/;

/** An identifier, of the type `prefix` names when given. */
export const idKey =
  (prefix?: IdPrefix) =>
  (value: unknown): value is string =>
    typeof value === 'string' && ID_SHAPE.test(value) && (prefix === undefined || value.startsWith(`${prefix}_`));

/** A position in a log: a non-negative safe integer. */
export const positionKey = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** The SQL types a keyset cursor carries values of, as PostgreSQL writes them with `::text`. */
export type CursorValueType = 'text' | 'numeric' | 'bigint' | 'boolean' | 'timestamptz';

const NUMERIC_TEXT = /^(-?\d+(\.\d+)?(e[+-]?\d+)?|NaN|-?Infinity)$/i;
const BIGINT_TEXT = /^-?\d{1,19}$/;
const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;
// PostgreSQL's ISO output of a timestamptz (`2026-11-26 22:06:06.315+00`), with the session's zone offset.
const TIMESTAMPTZ_TEXT = /^(\d{4,})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(Z|[+-]\d{2}(:?\d{2}){0,2})?( BC)?$/;

/** Whether `value`, a sort key a cursor carries as text, is one PostgreSQL reads back as `type` without an error. */
export function cursorValueFits(type: CursorValueType, value: string): boolean {
  switch (type) {
    case 'text':
      // PostgreSQL text holds no NUL.
      return !value.includes('\u0000');
    case 'numeric':
      // No length bound: a custom number of 1e300 reads back as 301 digits, and the cursor's own cap bounds it.
      return NUMERIC_TEXT.test(value);
    case 'bigint':
      return BIGINT_TEXT.test(value) && BigInt(value) >= BIGINT_MIN && BigInt(value) <= BIGINT_MAX;
    case 'boolean':
      return value === 'true' || value === 'false';
    case 'timestamptz':
      return value === 'infinity' || value === '-infinity' || isCalendarTime(value);
  }
}

function isCalendarTime(value: string): boolean {
  const parts = TIMESTAMPTZ_TEXT.exec(value);
  if (!parts) return false;
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number);
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  // PostgreSQL takes 24:00:00 as the next midnight and 60 seconds as the next minute, nothing past them.
  const time = hour < 24 ? minute <= 59 && second <= 60 : hour === 24 && minute === 0 && second === 0;
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day && time;
}
