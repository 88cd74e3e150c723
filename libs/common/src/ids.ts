import { monotonicFactory } from 'ulid';

/** Type prefixes from the interface spec; every identifier is `<prefix>_<ulid>`. */
export const IdPrefix = {
  ApiKey: 'key',
  Pipeline: 'pipe',
  Stage: 'stg',
  Webhook: 'whk',
  Delivery: 'whd',
  Event: 'evt',
  Contact: 'cont',
  Company: 'comp',
  Deal: 'deal',
  User: 'user',
  Activity: 'act',
  Task: 'task',
  StageHistory: 'sh',
  ObjectType: 'ot',
  ObjectRecord: 'rec',
  Import: 'imp',
} as const;
export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix];

const nextUlid = monotonicFactory();

/**
 * ULIDs sort by creation time, so ordering by id is ordering by creation: keyset pagination
 * over the primary key alone stays stable while rows are inserted and deleted.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${nextUlid().toLowerCase()}`;
}

const ID_SHAPE = /^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/;

/** True when `value` is an identifier of the given type; used to answer 404 early for ids that cannot exist. */
export function isId(value: unknown, prefix: IdPrefix): value is string {
  return typeof value === 'string' && value.startsWith(`${prefix}_`) && ID_SHAPE.test(value);
}
