import { Column, DataSource, Entity, MigrationInterface, PrimaryColumn, QueryRunner, SelectQueryBuilder } from 'typeorm';
import { openDatabase } from './database';
import { throwawayDatabase } from './throwaway-database.spec-support';
import { KEYSET_MATCH_CAP, KEYSET_NEAR_ROWS, KeysetOptions, keysetAfter, keysetPage } from './list-query';
import { CursorCodec } from './cursors';
import { Page } from './pagination';

@Entity({ name: 'items' })
class Item {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ type: 'text' })
  tag!: string;

  @Column({ type: 'integer' })
  score!: number;

  @Column({ type: 'boolean' })
  late!: boolean;
}

/**
 * Item n (1…ROWS) has id item_<n, 26 digits> (the shape of an identifier), score n (not indexed), tag `third` when n is a multiple of 3,
 * `rare` for three items, else `other` (indexed). `late` is true past item 5,000, but the statistics were
 * taken when it was true only past item 20,000 and autovacuum never refreshes them: the planner expects
 * 10,000 late items where there are 25,000.
 */
const ROWS = 30_000;
const itemId = (n: number) => `item_${String(n).padStart(26, '0')}`;
const cursors = new CursorCodec(['list-query spec secret, long enough to sign']);

class CreateItems1000000000000 implements MigrationInterface {
  name = 'CreateItems1000000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE TABLE items (id text PRIMARY KEY, tag text NOT NULL, score integer NOT NULL, late boolean NOT NULL) WITH (autovacuum_enabled = false)`,
    );
    await q.query(`CREATE INDEX items_tag ON items (tag)`);
    await q.query(
      `INSERT INTO items SELECT 'item_' || lpad(g::text, 26, '0'), CASE WHEN g % 3 = 0 THEN 'third' WHEN g IN (7, 15001, 29999) THEN 'rare' ELSE 'other' END, g, g > 20000
       FROM generate_series(1, ${ROWS}) g`,
    );
    await q.query(`ANALYZE items`);
    await q.query(`UPDATE items SET late = true WHERE score > 5000`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE items`);
  }
}

/**
 * A list filtered by a range in id order that PostgreSQL would serve by walking the primary key reads a page near the
 * cursor, else its capped matches, else the plain query (list-query.ts, filteredRows); whichever it takes,
 * pages, order and cursors are those of the plain `ORDER BY id LIMIT size + 1`, here against real
 * PostgreSQL on data shaped to send a page down each path.
 */
describe('keysetPage on a filtered list', () => {
  const database = throwawayDatabase();
  let dataSource: DataSource;
  const statements: string[] = [];

  beforeAll(async () => {
    dataSource = await openDatabase({ url: database.url, schema: 'items', entities: [Item], migrations: [CreateItems1000000000000], poolSize: 3 });
    jest.spyOn(dataSource.logger, 'logQuery').mockImplementation((sql) => void statements.push(sql));
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database.drop();
  });

  type Filter = (qb: SelectQueryBuilder<Item>) => void;

  /** What each statement a page ran was: the plan asked for, the page near the cursor, the capped read of every match, or the plain query. */
  const kind = (sql: string) =>
    sql.startsWith('EXPLAIN') ? 'plan' : sql.includes('keyset_near') ? 'near' : sql.includes('MATERIALIZED') ? 'matches' : 'plain';

  /** One page of the list with `filter` (declared a range filter unless `options` says otherwise), and the kinds of statement it took. */
  async function page(
    filter: Filter,
    limit: number,
    cursor?: string,
    options: KeysetOptions = { rangeFiltered: true },
  ): Promise<{ page: Page<string>; statements: string[] }> {
    const { qb, read } = keysetPage(cursors, dataSource.getRepository(Item), 'i', 'items', { cursor, limit }, options);
    filter(qb);
    statements.length = 0;
    const result = await read((item) => item.id);
    return { page: result, statements: statements.map(kind) };
  }

  /** Every page of the list, following next_cursor, each checked against the page the plain query gives; the statements of each page. */
  async function walk(filter: Filter, where: string, limit: number): Promise<string[][]> {
    const ids = ((await dataSource.query(`SELECT id FROM items.items WHERE ${where} ORDER BY id`)) as Array<{ id: string }>).map((r) => r.id);
    const taken: string[][] = [];
    let cursor: string | undefined;
    for (let start = 0; ; start += limit) {
      const got = await page(filter, limit, cursor);
      const data = ids.slice(start, start + limit);
      const more = ids.length > start + limit;
      expect(got.page).toEqual({ data, has_more: more, ...(more ? { next_cursor: cursors.encode('items', data[data.length - 1]) } : {}) });
      taken.push(got.statements);
      if (!more) return taken;
      cursor = got.page.next_cursor;
    }
  }

  it('serves a filter most rows match from the page near the cursor', async () => {
    const taken = await walk((qb) => qb.andWhere('i.tag = :tag', { tag: 'third' }), `tag = 'third'`, 50);
    expect(taken).toHaveLength(ROWS / 3 / 50);
    expect(taken[0]).toEqual(['plan', 'near']);
    // Within the last KEYSET_NEAR_ROWS ids there is no bound: the few matches left are read at once.
    expect(taken[taken.length - 1]).toEqual(['plan', 'near', 'matches']);
  });

  it('serves matches that all lie far along the key from the capped read of every match', async () => {
    const taken = await walk((qb) => qb.andWhere('i.score > :min', { min: ROWS - 2_000 }), `score > ${ROWS - 2_000}`, 50);
    expect(taken[0]).toEqual(['plan', 'near', 'matches']);
    const none = await page((qb) => qb.andWhere('i.score < 0'), 50);
    expect(none.page).toEqual({ data: [], has_more: false });
  });

  it('runs the plain query when the planner expects more matches than the cap: the walk finds a page soon', async () => {
    expect(ROWS - KEYSET_NEAR_ROWS).toBeGreaterThan(KEYSET_MATCH_CAP);
    const taken = await walk((qb) => qb.andWhere('i.score > :min', { min: KEYSET_NEAR_ROWS }), `score > ${KEYSET_NEAR_ROWS}`, 500);
    expect(taken[0]).toEqual(['plan', 'plain']);
  });

  it('runs the plain query when the capped read reaches the cap the planner did not expect', async () => {
    const taken = await walk((qb) => qb.andWhere('i.late'), 'late', 500);
    expect(taken[0]).toEqual(['plan', 'near', 'matches', 'plain']);
  });

  it('runs the plan PostgreSQL chose when it reads the matches through an index of their own', async () => {
    const taken = await walk((qb) => qb.andWhere('i.tag = :tag', { tag: 'rare' }), `tag = 'rare'`, 1);
    expect(taken).toEqual([
      ['plan', 'plain'],
      ['plan', 'plain'],
      ['plan', 'plain'],
    ]);
  });

  it('runs the plain query alone for a list that declares no range filter, whatever the planner would do', async () => {
    const far = await page((qb) => qb.andWhere('i.score > :min', { min: ROWS - 2_000 }), 50, undefined, {});
    expect(far.statements).toEqual(['plain']);
    expect(far.page.data[0]).toBe(itemId(ROWS - 2_000 + 1));
  });

  it('reads an unfiltered list with the plain query alone', async () => {
    const first = await page(() => undefined, 50);
    expect(first.statements).toEqual(['plain']);
    expect(first.page.data[0]).toBe(itemId(1));
  });

  /** The rows after `after` (a cursor's last row) in the order `keys…, id`, as keysetAfter says, with the plan of that read. */
  async function after(keys: Array<{ sql: string; desc: boolean }>, values: string[], lastId: string, size: number) {
    const params: string[] = [];
    const bind = (value: string, key: number | 'id') => {
      params.push(value);
      return `$${params.length}::${key === 'id' || keys[key].sql === 'i.id' ? 'text' : 'integer'}`;
    };
    const where = keysetAfter(keys, values, 'i.id', bind, lastId);
    const order = [...keys.map((k) => `${k.sql} ${k.desc ? 'DESC' : 'ASC'}`), 'i.id ASC'].join(', ');
    const sql = `SELECT i.id FROM items.items i WHERE ${where} ORDER BY ${order} LIMIT ${size}`;
    const rows = (await dataSource.query(sql, params)) as Array<{ id: string }>;
    const plan = ((await dataSource.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params)) as Array<{ 'QUERY PLAN': any }>)[0]['QUERY PLAN'][0];
    return { ids: rows.map((r) => r.id), plan };
  }

  it('pages a sort on the id itself by a range of the primary key, not a scan from the start', async () => {
    const deep = itemId(ROWS - 100);
    const asc = await after([{ sql: 'i.id', desc: false }], [deep], deep, 5);
    expect(asc.ids).toEqual([1, 2, 3, 4, 5].map((n) => itemId(ROWS - 100 + n)));
    // Rows read to answer: the five and the limit's look at the next, not the 29,900 before the cursor.
    expect(asc.plan.Plan['Actual Rows']).toBe(5);
    expect(JSON.stringify(asc.plan)).toContain('Index Cond');
    expect(JSON.stringify(asc.plan)).not.toContain('Rows Removed by Filter');

    const desc = await after([{ sql: 'i.id', desc: true }], [itemId(100)], itemId(100), 3);
    expect(desc.ids).toEqual([99, 98, 97].map(itemId));
    // After another key the id still decides ties, and rows with a larger score come later.
    const mixed = await after(
      [
        { sql: 'i.score', desc: false },
        { sql: 'i.id', desc: false },
      ],
      ['100', itemId(100)],
      itemId(100),
      2,
    );
    expect(mixed.ids).toEqual([101, 102].map(itemId));
  });
});
