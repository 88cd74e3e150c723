import { startStack, TestStack } from '../support/stack';

/**
 * A grouping's memory is bounded, not only its time (docs/aggregate.md, "Memory"): each sort or hash of
 * the aggregation may use AGGREGATE_WORK_MEM, and past it the temporary files it writes at most
 * AGGREGATE_TEMP_FILE_LIMIT together; past that the answer is a 400 query_too_expensive saying what to
 * change. Here both are 64 kB: grouping 1,000 contacts by email spills past them, grouping by title does not.
 */
describe('the memory of an aggregation', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startStack({ services: ['contacts'], env: { AGGREGATE_WORK_MEM: '64kB', AGGREGATE_TEMP_FILE_LIMIT: '64kB' } });
    for (let batch = 0; batch < 5; batch++) {
      const items = Array.from({ length: 200 }, (_, i) => ({
        email: `memory.${batch}.${i}.${'padding'.repeat(4)}@example.com`,
        first_name: `Memory ${batch} ${i}`,
        title: i % 2 ? 'Engineer' : 'Manager',
      }));
      const res = await stack.api.post('/contacts/batch', { operation: 'create', items });
      expect(res.status).toBe(200);
    }
  });
  afterAll(() => stack.stop());

  it('refuses a grouping by a high-cardinality path past its temporary files, naming the limit and what to change', async () => {
    const res = await stack.api.post('/contacts/aggregate', { group_by: ['email'], metrics: { n: { op: 'count' } }, limit: 1 });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('query_too_expensive');
    expect(res.body.error.message).toMatch(/64kB of temporary files.*Group by fewer paths/);
  });

  it('answers a grouping with few groups under the same settings', async () => {
    const res = await stack.api.post('/contacts/aggregate', { group_by: ['title'], metrics: { n: { op: 'count' } } });
    expect(res.status).toBe(200);
    expect(res.body.data.map((g: { metrics: { n: number } }) => g.metrics.n)).toEqual([500, 500]);
  });
});
