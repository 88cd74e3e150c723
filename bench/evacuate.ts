import { IdPrefix, newId } from '@crm/common';
import { join } from 'path';
import { Client } from 'pg';
import { machine, startBenchStack } from './bench-stack';

/**
 * Times moving every deal off a stage (DELETE /pipelines/:id/stages/:stage_id?move_to_stage_id=…) and off
 * a pipeline (DELETE /pipelines/:id?move_to_stage_id=…), with BENCH_EVACUATE_DEALS deals each (10,000 by
 * default), through the API of the five processes built under dist/. One request is one transaction:
 * locking the deals, moving them, their stage history and their events in the outbox. The RPC timeout
 * is raised to 60 s so a slow move is measured rather than cut off. `npm run bench:evacuate`.
 */
const ROOT = join(__dirname, '..', '..');
const DEALS = Number(process.env.BENCH_EVACUATE_DEALS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

async function main(): Promise<void> {
  process.env.RPC_TIMEOUT_MS = '60000';
  const stack = await startBenchStack(ROOT);
  const pg = new Client({ connectionString: stack.databaseUrl });
  await pg.connect();
  const results: Array<{ what: string; ms: number }> = [];
  const timedDelete = async (what: string, path: string) => {
    const started = performance.now();
    const res = await fetch(`${stack.api}${path}`, { method: 'DELETE', headers: { 'X-Api-Key': stack.key } });
    if (res.status !== 204) throw new Error(`DELETE ${path}: ${res.status} ${await res.text()}`);
    results.push({ what, ms: performance.now() - started });
  };
  // Filled straight in SQL: the benchmark is about the move, not about creating deals.
  const fill = async (pipelineId: string, stageId: string) => {
    const ids = Array.from({ length: DEALS }, () => newId(IdPrefix.Deal));
    await pg.query(
      `INSERT INTO deals.deals (id, name, pipeline_id, stage_id, value, currency, status)
       SELECT id, 'Bench deal', $2, $3, 1000, 'USD', 'open' FROM unnest($1::text[]) AS id`,
      [ids, pipelineId, stageId],
    );
    await pg.query(`ANALYZE deals.deals`);
  };
  try {
    const stages = [
      { name: 'A', type: 'open' },
      { name: 'B', type: 'open' },
      { name: 'Won', type: 'won' },
    ];
    for (let round = 1; round <= ROUNDS; round++) {
      const stay = await stack.post('/pipelines', { name: `Stay ${round}`, stages });
      const [from, to, won] = stay.stages as Array<{ id: string }>;
      await fill(stay.id, from.id);
      await timedDelete('stage', `/pipelines/${stay.id}/stages/${from.id}?move_to_stage_id=${to.id}`);

      const leave = await stack.post('/pipelines', { name: `Leave ${round}`, stages });
      await fill(leave.id, leave.stages[0].id);
      await timedDelete('pipeline', `/pipelines/${leave.id}?move_to_stage_id=${won.id}`);
      // Every round starts from an empty table and moves the same number of deals.
      await pg.query(`DELETE FROM deals.deals`);
    }
  } finally {
    await pg.end();
    await stack.stop();
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  process.stdout.write(`${new Date().toISOString()} — ${machine()} — ${DEALS} deals, ${ROUNDS} rounds\n\n`);
  process.stdout.write(`| Evacuation of ${DEALS} deals | median ms | each round, ms |\n|---|---:|---|\n`);
  for (const what of ['stage', 'pipeline']) {
    const times = results.filter((r) => r.what === what).map((r) => r.ms);
    process.stdout.write(`| ${what} | ${Math.round(median(times))} | ${times.map((t) => Math.round(t)).join(', ')} |\n`);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
