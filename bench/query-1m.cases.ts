import { companyId, CONTACTS } from './seed-1m';

/** The queries `npm run bench:query` times (query-1m.ts), each with the statement the compiler produces for it. */

/** The most ids one condition across services may match (QUERY_RELATED_IDS_MAX of the services). */
export const RELATED_IDS_MAX = Number(process.env.QUERY_RELATED_IDS_MAX ?? 10_000);

export type Schema = 'contacts' | 'deals';
export type Rows = Array<Record<string, unknown>>;

export interface Statement {
  text: string;
  params: unknown[];
}

export interface QueryCase {
  label: string;
  /** `POST /<object>/query`. */
  object: string;
  body: Record<string, unknown>;
  /** The service whose connection settings (search_path) the statement runs under. */
  schema: Schema;
  /** What the query runner compiles the body to: the statement that reads the page. */
  sql: Statement;
  /**
   * Statements the services run before it, in order, each on its own service's connection (a path across
   * services: the candidates, then the other service's matching ids); `bind` makes the page statement's
   * parameters from their rows.
   */
  prelude?: { steps: Array<{ schema: Schema; sql: (previous: Rows[]) => Statement }>; bind: (previous: Rows[]) => unknown[] };
  /** A path the API does not serve yet: a 400 `validation_failed` is reported as such, not as a failure. */
  unsupportedYet?: boolean;
  /** May run past QUERY_TIMEOUT_MS: a 400 `query_too_expensive` is its answer, not a failure. */
  mayTimeOut?: boolean;
  /** Print the plan of its statements whatever its p99 (otherwise only over 50 ms). */
  explain?: boolean;
  /** Time page `number` alone: the cursor comes from walking the pages before it; `after` is the statement past a row's sort key and id. */
  page?: { number: number; after: (key: string, id: string) => Statement };
}

/** A custom field's value as the compiler reads it: null unless the stored JSON has the definition's type. */
const custom = (alias: string, name: string, jsonType: 'string' | 'number', cast: 'text' | 'numeric') =>
  `(CASE WHEN jsonb_typeof(${alias}.custom_fields->'${name}') = '${jsonType}' THEN (${alias}.custom_fields->>'${name}')::${cast} END)`;
/**
 * Equality on a custom string field, on either object: the containment test its GIN index serves,
 * then the typed read that keeps a value of another JSON type from matching.
 */
function customEquality(object: Schema, field: string, value: string, share: string): QueryCase {
  const alias = object[0];
  const read = custom(alias, field, 'string', 'text');
  return {
    label: `${object}, custom field equality (${field}, ${share})`,
    object,
    schema: object,
    body: { filter: { [`custom_fields.${field}`]: value } },
    sql: {
      text: `SELECT ${alias}.* FROM ${object} ${alias}  WHERE ((${alias}.custom_fields @> $2::jsonb AND ${read} = $1::text AND ${read} IS NOT NULL)) AND (TRUE) ORDER BY ${alias}.id ASC LIMIT 51`,
      params: [value, JSON.stringify({ [field]: value })],
    },
  };
}
/** Equality on a field of a related record of the same service, joined as the query engine joins it. */
function relationEquality(object: Schema, path: { relation: string; table: string; column: string; folded: boolean }, value: string, share: string): QueryCase {
  const alias = object[0];
  const joined = `${alias}_${path.relation}`;
  const field = `${joined}.${path.column}`;
  const equal = path.folded ? `lower(${field}) = lower($1::text) AND ${field} = $1::text` : `${field} = $1::text`;
  return {
    label: `${object}, ${path.relation}.${path.column} (${share})`,
    object,
    schema: object,
    body: { filter: { [`${path.relation}.${path.column}`]: value } },
    sql: {
      text:
        `SELECT ${alias}.*, ${joined}.id AS "~j_${path.relation}" FROM ${object} ${alias} LEFT JOIN ${path.table} ${joined} ON ${joined}.id = ${alias}.${path.relation}_id ` +
        `WHERE ((${equal} AND ${field} IS NOT NULL)) AND (TRUE) ORDER BY ${alias}.id ASC LIMIT 51`,
      params: [value],
    },
  };
}
const SEATS = custom('d', 'seats', 'number', 'numeric');
/** A custom date-time as the compiler reads it: the instant its text names, the expression its index (contacts_cf_renews_at_instant) holds. */
const RENEWS_AT = `custom_instant(c.custom_fields->'renews_at')`;

/**
 * One month a year ago on a date-time of contacts, filtered in id order and sorted by it: the custom
 * `renews_at` (about 2.6% of contacts, scattered over ids) beside the built-in `created_at` (about 4%,
 * rising with ids), each printed with its plan.
 */
function dateTimeRange(field: 'custom_fields.renews_at' | 'created_at', from: string, to: string): QueryCase[] {
  const x = field === 'created_at' ? 'c.created_at' : RENEWS_AT;
  const where = `((${x} >= $1::timestamptz AND ${x} IS NOT NULL) AND (${x} < $2::timestamptz AND ${x} IS NOT NULL))`;
  const filter = { [field]: { $gte: from, $lt: to } };
  return [
    {
      label: `contacts, ${field} in one month a year ago`,
      object: 'contacts',
      schema: 'contacts',
      explain: true,
      mayTimeOut: true,
      body: { filter },
      sql: { text: `SELECT c.* FROM contacts c  WHERE ${where} AND (TRUE) ORDER BY c.id ASC LIMIT 51`, params: [from, to] },
    },
    {
      label: `contacts, ${field} in one month a year ago, sorted by it`,
      object: 'contacts',
      schema: 'contacts',
      explain: true,
      mayTimeOut: true,
      body: { filter, sort: [{ field, direction: 'asc' }] },
      sql: { text: `SELECT c.*, (${x})::text AS "~k0" FROM contacts c  WHERE ${where} AND (TRUE) ORDER BY ${x} ASC, c.id ASC LIMIT 51`, params: [from, to] },
    },
  ];
}
/** A search box built from $or of $contains: words no contact has, so every row is read and tested. */
const SEARCH_WORDS = ['zephyrine', 'quillon', 'vexmoor', 'jubbly'];
const SEARCH_PATHS = ['first_name', 'last_name', 'email', 'company.name'];

export function cases(): QueryCase[] {
  const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
  const email = (g: number) => `person${g}@${['acme.com', 'globex.io', 'initech.net', 'umbrella.org'][g % 4]}`;
  const oneEmail = email(Math.floor(CONTACTS / 2));
  const weekStart = daysAgo(365);
  const weekEnd = daysAgo(358);
  const recent = daysAgo(7);
  const monthStart = daysAgo(365);
  const monthEnd = daysAgo(335);
  const companies = Array.from({ length: 500 }, (_, i) => companyId(1 + i * 40));
  // The contact of deal 1 (deals point at contact 1 + 7g).
  const dealContact = email(8);
  return [
    {
      label: 'contacts, no filter (first page)',
      object: 'contacts',
      schema: 'contacts',
      body: {},
      sql: { text: `SELECT c.* FROM contacts c  WHERE (TRUE) AND (TRUE) ORDER BY c.id ASC LIMIT 51`, params: [] },
    },
    {
      label: 'contacts, email equality (one match)',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { email: oneEmail } },
      sql: {
        text: `SELECT c.* FROM contacts c  WHERE ((lower(c.email) = lower($1::text) AND c.email = $1::text AND c.email IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: [oneEmail],
      },
    },
    {
      label: 'contacts, created_at in one week a year ago',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { created_at: { $gte: weekStart, $lt: weekEnd } } },
      sql: {
        text: `SELECT c.* FROM contacts c  WHERE ((c.created_at >= $1::timestamptz AND c.created_at IS NOT NULL) AND (c.created_at < $2::timestamptz AND c.created_at IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: [weekStart, weekEnd],
      },
    },
    {
      label: 'contacts, sorted by created_at desc',
      object: 'contacts',
      schema: 'contacts',
      body: { sort: [{ field: 'created_at', direction: 'desc' }] },
      sql: {
        text: `SELECT c.*, (c.created_at)::text AS "~k0" FROM contacts c  WHERE (TRUE) AND (TRUE) ORDER BY c.created_at DESC, c.id ASC LIMIT 51`,
        params: [],
      },
    },
    {
      label: 'contacts, $and / $or / $not tree',
      object: 'contacts',
      schema: 'contacts',
      body: {
        filter: { $and: [{ stage: 'customer' }, { $or: [{ source: 'referral' }, { icp_score: { $gte: 90 } }] }, { $not: { owner_id: { $exists: true } } }] },
      },
      sql: {
        text:
          `SELECT c.* FROM contacts c  WHERE (((c.stage = $1::text AND c.stage IS NOT NULL) AND ((c.source = $2::text AND c.source IS NOT NULL) OR ` +
          `(c.icp_score >= $3::bigint AND c.icp_score IS NOT NULL)) AND NOT ((c.owner_id IS NOT NULL)))) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: ['customer', 'referral', 90],
      },
    },
    customEquality('contacts', 'region', 'apac', 'a fifth match'),
    relationEquality('contacts', { relation: 'company', table: 'companies', column: 'domain', folded: true }, 'company777.example', 'one company'),
    {
      label: 'contacts, company_id $in 500 values',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { company_id: { $in: companies } } },
      sql: {
        text: `SELECT c.* FROM contacts c  WHERE ((c.company_id = ANY($1::text[]) AND c.company_id IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: [companies],
      },
    },
    {
      label: 'contacts, last_name $contains (11 match)',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { last_name: { $contains: 'KNUTH4252' } } },
      sql: {
        text: `SELECT c.* FROM contacts c  WHERE ((c.last_name ILIKE $1::text AND c.last_name IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: ['%KNUTH4252%'],
      },
    },
    {
      label: 'contacts, owner_id $exists',
      object: 'contacts',
      schema: 'contacts',
      body: { filter: { owner_id: { $exists: true } } },
      sql: { text: `SELECT c.* FROM contacts c  WHERE ((c.owner_id IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`, params: [] },
    },
    {
      label: 'contacts, fields with company.* and owner.*, 100 a page',
      object: 'contacts',
      schema: 'contacts',
      body: {
        filter: { stage: 'customer' },
        fields: ['email', 'first_name', 'last_name', 'icp_score', 'custom_fields.region', 'company.name', 'company.domain', 'owner.name'],
        limit: 100,
      },
      sql: {
        text:
          `SELECT c.id AS id, c.email AS "~f0", c.first_name AS "~f1", c.last_name AS "~f2", c.icp_score AS "~f3", c.custom_fields->'region' AS "~f4", ` +
          `c_company.name AS "~f5", c_company.domain AS "~f6", c_owner.name AS "~f7", c_company.id AS "~j_company", c_owner.id AS "~j_owner" ` +
          `FROM contacts c LEFT JOIN companies c_company ON c_company.id = c.company_id LEFT JOIN users c_owner ON c_owner.id = c.owner_id ` +
          `WHERE ((c.stage = $1::text AND c.stage IS NOT NULL)) AND (TRUE) ORDER BY c.id ASC LIMIT 101`,
        params: ['customer'],
      },
    },
    {
      label: `contacts, no index serves it: ${SEARCH_WORDS.length} absent words $contains in first_name, last_name, email or company.name`,
      object: 'contacts',
      schema: 'contacts',
      mayTimeOut: true,
      body: { filter: { $or: SEARCH_WORDS.flatMap((word) => SEARCH_PATHS.map((path) => ({ [path]: { $contains: word } }))) } },
      sql: {
        text:
          `SELECT c.*, c_company.id AS "~j_company" FROM contacts c LEFT JOIN companies c_company ON c_company.id = c.company_id WHERE ((` +
          SEARCH_WORDS.flatMap((_, w) =>
            ['c.first_name', 'c.last_name', 'c.email', 'c_company.name'].map((x, f) => `(${x} ILIKE $${w * 4 + f + 1}::text AND ${x} IS NOT NULL)`),
          ).join(' OR ') +
          `)) AND (TRUE) ORDER BY c.id ASC LIMIT 51`,
        params: SEARCH_WORDS.flatMap((word) => SEARCH_PATHS.map(() => `%${word}%`)),
      },
    },
    {
      label: 'activities, type and contact.icp_score (relation path)',
      object: 'activities',
      schema: 'contacts',
      body: { filter: { type: 'meeting', 'contact.icp_score': { $gte: 95 } } },
      sql: {
        text:
          `SELECT a.*, a_contact.id AS "~j_contact" FROM activities a LEFT JOIN contacts a_contact ON a_contact.id = a.contact_id ` +
          `WHERE ((a.type = $1::text AND a.type IS NOT NULL) AND (a_contact.icp_score >= $2::bigint AND a_contact.icp_score IS NOT NULL)) AND (TRUE) ORDER BY a.id ASC LIMIT 51`,
        params: ['meeting', 95],
      },
    },
    {
      label: 'deals, value range (0.1% match)',
      object: 'deals',
      schema: 'deals',
      body: { filter: { value: { $gte: 50_000_000, $lt: 50_100_000 } } },
      sql: {
        text: `SELECT d.* FROM deals d  WHERE ((d.value >= $1::bigint AND d.value IS NOT NULL) AND (d.value < $2::bigint AND d.value IS NOT NULL)) AND (TRUE) ORDER BY d.id ASC LIMIT 51`,
        params: [50_000_000, 50_100_000],
      },
    },
    {
      label: 'deals, created_at in the last 7 days',
      object: 'deals',
      schema: 'deals',
      body: { filter: { created_at: { $gte: recent } } },
      sql: {
        text: `SELECT d.* FROM deals d  WHERE ((d.created_at >= $1::timestamptz AND d.created_at IS NOT NULL)) AND (TRUE) ORDER BY d.id ASC LIMIT 51`,
        params: [recent],
      },
    },
    customEquality('deals', 'tier', 'strategic', '0.1% match'),
    relationEquality('deals', { relation: 'stage', table: 'stages', column: 'type', folded: false }, 'won', 'relation path'),
    {
      label: 'deals, contact.email (path across services)',
      object: 'deals',
      schema: 'deals',
      unsupportedYet: true,
      body: { filter: { 'contact.email': dealContact } },
      // The deals service reads which contacts its candidate rows reference (too many here to send, so the
      // contacts service is not told), the contacts service answers the ids the condition matches, and the
      // deals service reads the page of deals referencing them.
      prelude: {
        steps: [
          {
            schema: 'deals',
            sql: () => ({
              text: `SELECT DISTINCT d.contact_id AS ref FROM deals d  WHERE ((TRUE)) AND d.contact_id IS NOT NULL LIMIT ${RELATED_IDS_MAX + 1}`,
              params: [],
            }),
          },
          {
            schema: 'contacts',
            sql: ([candidates]) =>
              candidates.length <= RELATED_IDS_MAX
                ? {
                    text: `SELECT c.id FROM contacts c WHERE (lower(c.email) = lower($1::text) AND c.email = $1::text AND c.email IS NOT NULL) AND c.id = ANY($2::text[]) LIMIT ${RELATED_IDS_MAX + 1}`,
                    params: [dealContact, candidates.map((row) => row.ref)],
                  }
                : {
                    text: `SELECT c.id FROM contacts c WHERE (lower(c.email) = lower($1::text) AND c.email = $1::text AND c.email IS NOT NULL) LIMIT ${RELATED_IDS_MAX + 1}`,
                    params: [dealContact],
                  },
          },
        ],
        bind: ([, matched]) => [matched.map((row) => row.id)],
      },
      sql: {
        text: `SELECT d.* FROM deals d  WHERE ((d.contact_id = ANY($1::text[]) AND d.contact_id IS NOT NULL)) AND (TRUE) ORDER BY d.id ASC LIMIT 51`,
        params: [],
      },
    },
    {
      label: 'deals, sorted by value desc, page 10 (the 10th request alone)',
      object: 'deals',
      schema: 'deals',
      body: { sort: [{ field: 'value', direction: 'desc' }] },
      sql: { text: `SELECT d.*, (d.value)::text AS "~k0" FROM deals d  WHERE (TRUE) AND (TRUE) ORDER BY d.value DESC, d.id ASC LIMIT 51`, params: [] },
      page: {
        number: 10,
        after: (key, id) => ({
          text:
            `SELECT d.*, (d.value)::text AS "~k0" FROM deals d  WHERE (TRUE) AND ((d.value < $1::bigint) OR (d.value = $1::bigint AND d.id > $2::text)) ` +
            `ORDER BY d.value DESC, d.id ASC LIMIT 51`,
          params: [key, id],
        }),
      },
    },
    {
      label: 'deals, sorted by a custom field (seats desc), with fields',
      object: 'deals',
      schema: 'deals',
      body: {
        filter: { 'custom_fields.seats': { $exists: true } },
        sort: [{ field: 'custom_fields.seats', direction: 'desc' }],
        fields: ['name', 'value', 'custom_fields.seats', 'custom_fields.tier', 'stage.name'],
      },
      sql: {
        text:
          `SELECT d.id AS id, d.name AS "~f0", d.value AS "~f1", d.custom_fields->'seats' AS "~f2", d.custom_fields->'tier' AS "~f3", d_stage.name AS "~f4", ` +
          `(${SEATS})::text AS "~k0", d_stage.id AS "~j_stage" FROM deals d LEFT JOIN stages d_stage ON d_stage.id = d.stage_id ` +
          `WHERE ((${SEATS} IS NOT NULL)) AND (TRUE) ORDER BY ${SEATS} DESC, d.id ASC LIMIT 51`,
        params: [],
      },
    },
    ...dateTimeRange('custom_fields.renews_at', monthStart, monthEnd),
    ...dateTimeRange('created_at', monthStart, monthEnd),
  ];
}
