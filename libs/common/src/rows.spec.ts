import { Column, DataSource, Entity, MigrationInterface, PrimaryColumn, QueryRunner } from 'typeorm';
import { openDatabase } from './database';
import { throwawayDatabase } from './throwaway-database.spec-support';
import { columnValues, findById, findByIdsAt, insertReturning, insertRows, updateReturning, updateRows } from './rows';

const cents = { to: (v: number | null) => v, from: (v: string | null) => (v === null ? null : Math.round(Number(v) * 100)) };

@Entity({ name: 'widgets' })
class Widget {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  @Column({ name: 'display_name', type: 'text' })
  displayName!: string;

  @Column({ type: 'integer', nullable: true })
  rank!: number | null;

  @Column({ type: 'numeric', nullable: true, transformer: cents })
  price!: number | null;

  @Column({ type: 'boolean', default: false })
  active!: boolean;

  @Column({ type: 'jsonb', default: () => `'{}'::jsonb` })
  metadata!: Record<string, unknown>;

  @Column({ type: 'text', array: true, default: () => `'{}'` })
  tags!: string[];

  @Column({ name: 'due_on', type: 'date', nullable: true })
  dueOn!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'clock_timestamp()' })
  createdAt!: Date;
}

class CreateWidgets1000000000000 implements MigrationInterface {
  name = 'CreateWidgets1000000000000';
  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE TABLE widgets (
      id text PRIMARY KEY, display_name text NOT NULL, rank integer, price numeric, active boolean NOT NULL DEFAULT false,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb, tags text[] NOT NULL DEFAULT '{}', due_on date,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE widgets`);
  }
}

/** The hot-path row helpers give exactly the entities TypeORM's own find gives, against real PostgreSQL. */
describe('row helpers', () => {
  const database = throwawayDatabase();
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await openDatabase({ url: database.url, schema: 'widgets', entities: [Widget], migrations: [CreateWidgets1000000000000], poolSize: 3 });
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database.drop();
  });

  it('insertReturning returns the stored row, defaults included, as findOne reads it', async () => {
    const inserted = await insertReturning(dataSource.manager, Widget, {
      id: 'w1',
      displayName: 'First',
      price: 12.5 as never,
      metadata: { b: 1, a: { c: [1, 2] } },
    });
    const found = await dataSource.manager.findOneByOrFail(Widget, { id: 'w1' });
    expect(inserted).toBeInstanceOf(Widget);
    expect(inserted).toEqual(found);
    expect(inserted.price).toBe(1250);
    expect(inserted.active).toBe(false);
    expect(inserted.tags).toEqual([]);
    expect(inserted.createdAt).toBeInstanceOf(Date);
  });

  it('findById reads every column type as findOne does, and null for a missing id', async () => {
    await dataSource.manager.insert(Widget, {
      id: 'w2',
      displayName: 'Second',
      rank: 3,
      active: true,
      tags: ['x', 'y'],
      dueOn: '2026-12-01',
      metadata: { k: 'v' },
    });
    const found = await findById(dataSource.manager, Widget, 'w2');
    expect(found).toBeInstanceOf(Widget);
    expect(found).toEqual(await dataSource.manager.findOneByOrFail(Widget, { id: 'w2' }));
    expect(found).toMatchObject({ displayName: 'Second', rank: 3, price: null, active: true, tags: ['x', 'y'], dueOn: '2026-12-01', metadata: { k: 'v' } });
    expect(await findById(dataSource.manager, Widget, 'missing')).toBeNull();
  });

  it('findById with lock holds the row until the transaction ends', async () => {
    await dataSource.manager.insert(Widget, { id: 'w3', displayName: 'Third' });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = dataSource.transaction(async (m) => {
      await findById(m, Widget, 'w3', true);
      locked();
      await held;
    });
    await isLocked;
    const waiter = dataSource.transaction(async (m) => {
      await m.query(`SET LOCAL lock_timeout = '200ms'`);
      return findById(m, Widget, 'w3', true);
    });
    await expect(waiter).rejects.toThrow(/lock timeout/);
    // FOR UPDATE keeps shared holders out too; a shared hold lets others share it and keeps writers out.
    const sharer = dataSource.transaction(async (m) => {
      await m.query(`SET LOCAL lock_timeout = '200ms'`);
      return findById(m, Widget, 'w3', 'share');
    });
    await expect(sharer).rejects.toThrow(/lock timeout/);
    release();
    await holder;
    await dataSource.transaction(async (m) => {
      await findById(m, Widget, 'w3', 'share');
      await expect(dataSource.transaction((other) => findById(other, Widget, 'w3', 'share'))).resolves.toMatchObject({ id: 'w3' });
      await dataSource.transaction(async (other) => {
        await other.query(`SET LOCAL lock_timeout = '200ms'`);
        await expect(findById(other, Widget, 'w3', true)).rejects.toThrow(/lock timeout/);
      });
    });
  });

  it('updateReturning returns the row as stored after the update, SQL expressions evaluated', async () => {
    const before = await findById(dataSource.manager, Widget, 'w2');
    const updated = await updateReturning(dataSource.manager, Widget, 'w2', {
      displayName: 'Renamed',
      rank: () => 'rank + 1',
      createdAt: () => `'2020-01-02T03:04:05.678Z'::timestamptz`,
    });
    expect(updated).toEqual(await dataSource.manager.findOneByOrFail(Widget, { id: 'w2' }));
    expect(updated).toMatchObject({ displayName: 'Renamed', rank: before!.rank! + 1, tags: ['x', 'y'] });
    expect(updated.createdAt.toISOString()).toBe('2020-01-02T03:04:05.678Z');
    await expect(updateReturning(dataSource.manager, Widget, 'missing', { displayName: 'x' })).rejects.toThrow(/vanished/);
  });

  it('findByIdsAt reads the rows and the clock in one statement, and nothing for no ids', async () => {
    const before = (await dataSource.query(`SELECT clock_timestamp() AS at`))[0].at as Date;
    const { rows, now } = await findByIdsAt(dataSource.manager, Widget, ['w2', 'missing'], 'clock_timestamp()');
    expect(rows).toEqual([await dataSource.manager.findOneByOrFail(Widget, { id: 'w2' })]);
    expect(now).toBeInstanceOf(Date);
    expect(now!.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(await findByIdsAt(dataSource.manager, Widget, ['missing'], 'clock_timestamp()')).toEqual({ rows: [], now: undefined });
    expect(await findByIdsAt(dataSource.manager, Widget, [], 'clock_timestamp()')).toEqual({ rows: [], now: undefined });
  });

  it('columnValues names each property by its column and writes dates as ISO strings, for insertRows', async () => {
    const at = new Date('2021-03-04T05:06:07.089Z');
    const values = columnValues(dataSource.manager, Widget, { id: 'w9', displayName: 'Nine', rank: undefined, createdAt: at }, [
      'id',
      'displayName',
      'rank',
      'createdAt',
    ]);
    expect(values).toEqual({ id: 'w9', display_name: 'Nine', rank: null, created_at: '2021-03-04T05:06:07.089Z' });
    const [stored] = await insertRows(dataSource.manager, Widget, [values]);
    expect(stored).toEqual(await dataSource.manager.findOneByOrFail(Widget, { id: 'w9' }));
    expect(stored).toMatchObject({ displayName: 'Nine', rank: null, createdAt: at });
  });

  it('updateRows writes the rows it is given through the key index, never reading the whole table', async () => {
    await dataSource.query(`INSERT INTO widgets (id, display_name) SELECT 'bulk' || i, 'Bulk' FROM generate_series(1, 5000) i`);
    await dataSource.query(`ANALYZE widgets`);
    await dataSource.transaction(async (m) => {
      const [one] = await updateRows(m, Widget, [columnValues(m, Widget, { id: 'bulk42', displayName: 'Renamed', rank: 3 }, ['id', 'displayName', 'rank'])]);
      expect(one).toMatchObject({ id: 'bulk42', displayName: 'Renamed', rank: 3 });
      const two = await updateRows(m, Widget, [
        { id: 'bulk1', rank: 1 },
        { id: 'bulk2', rank: 2 },
        { id: 'missing', rank: 9 },
      ]);
      expect(two.map((w) => [w.id, w.rank]).sort()).toEqual([
        ['bulk1', 1],
        ['bulk2', 2],
      ]);
      // This transaction's scans of the table so far: only index scans.
      const [{ seq_scan }] = await m.query(`SELECT seq_scan FROM pg_stat_xact_user_tables WHERE relname = 'widgets'`);
      expect(Number(seq_scan)).toBe(0);
    });
  });
});
