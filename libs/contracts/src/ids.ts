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
  Change: 'chg',
  Erasure: 'era',
  Product: 'prod',
  LineItem: 'li',
} as const;
export type IdPrefix = (typeof IdPrefix)[keyof typeof IdPrefix];
