import { DataSource } from 'typeorm';
import { SuccessBatch, SuccessRecord } from './success-batch';

const record = (n: number): SuccessRecord => ({
  deliveryId: `whd_${n}`,
  subscriptionId: `whk_${n}`,
  leaseToken: 't',
  cursorRevision: 0,
  eventPosition: n,
  httpStatus: 204,
  durationMs: 1,
  nextDeliveryId: null,
});

/** A stand-in for the database's query call: each call waits until released, then answers (or fails) as told. */
function database(fail: (sql: string) => boolean = () => false) {
  const calls: Array<{ sql: string; params: unknown[]; release: () => void }> = [];
  const query = (sql: string, params: unknown[]) =>
    new Promise((resolve, reject) => {
      calls.push({
        sql,
        params,
        release: () => {
          if (fail(sql)) return reject(new Error('deadlock detected'));
          if (Array.isArray(params[0])) resolve((params[0] as string[]).map((delivery) => ({ delivery, outcome: { go_on: true } })));
          else resolve([{ outcome: { go_on: true, one: params[0] } }]);
        },
      });
    });
  return { calls, dataSource: { query } as unknown as DataSource };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('SuccessBatch', () => {
  it('writes the first success at once and those that arrive meanwhile in one statement', async () => {
    const db = database();
    const batch = new SuccessBatch(db.dataSource, 10_000, 1);
    const first = batch.record(record(1));
    await settle();
    expect(db.calls).toHaveLength(1);
    const rest = [2, 3, 4, 5].map((n) => batch.record(record(n)));
    await settle();
    expect(db.calls).toHaveLength(1);
    db.calls[0].release();
    await expect(first).resolves.toMatchObject({ go_on: true, one: 'whd_1' });
    await settle();
    expect(db.calls).toHaveLength(2);
    expect(db.calls[1].params[0]).toEqual(['whd_2', 'whd_3', 'whd_4', 'whd_5']);
    expect(db.calls[1].sql).toMatch(/ORDER BY u\.subscription OFFSET 0/);
    db.calls[1].release();
    await expect(Promise.all(rest)).resolves.toEqual([2, 3, 4, 5].map(() => ({ go_on: true })));
  });

  it('writes up to its number of batches at once, and only then gathers the rest', async () => {
    const db = database();
    const batch = new SuccessBatch(db.dataSource, 10_000, 2);
    const all = [1, 2, 3, 4, 5].map((n) => batch.record(record(n)));
    await settle();
    expect(db.calls.map((c) => c.params[0])).toEqual(['whd_1', 'whd_2']);
    db.calls[1].release();
    await settle();
    expect(db.calls[2].params[0]).toEqual(['whd_3', 'whd_4', 'whd_5']);
    db.calls[0].release();
    db.calls[2].release();
    await expect(Promise.all(all)).resolves.toHaveLength(5);
  });

  it('records a failed batch again one success at a time', async () => {
    const db = database((sql) => sql.includes('unnest'));
    const batch = new SuccessBatch(db.dataSource, 10_000, 1);
    const first = batch.record(record(1));
    const rest = [2, 3].map((n) => batch.record(record(n)));
    await settle();
    db.calls[0].release();
    await first;
    await settle();
    db.calls[1].release();
    for (let i = 2; i < 4; i++) {
      await settle();
      db.calls[i].release();
    }
    await expect(Promise.all(rest)).resolves.toEqual([
      { go_on: true, one: 'whd_2' },
      { go_on: true, one: 'whd_3' },
    ]);
    expect(db.calls.map((c) => (c.sql.includes('unnest') ? 'batch' : 'one'))).toEqual(['one', 'batch', 'one', 'one']);
  });
});
