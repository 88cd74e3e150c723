import autocannon from 'autocannon';
import {
  BenchStack,
  buildRef,
  CONNECTIONS,
  ROOT,
  createContactsLoad,
  load,
  machine,
  Row,
  runBenchmark,
  settledCpuMs,
  startBenchStack,
  thisBuild,
} from './bench-stack';

/**
 * Compares this build with an earlier commit on the hot request paths, in one run on one machine:
 * both stacks run side by side and each scenario alternates between them for several rounds, so drift
 * in the machine's load hits both alike. `npm run bench:compare -- <git ref>` (default HEAD~1).
 * Throughput moves with whatever else the machine runs; CPU time per request (summed over the five
 * processes, from /proc, from before the load until the stack has gone quiet after it) moves much less, so it
 * is the column to compare on a shared machine.
 * BENCH_ROUNDS, BENCH_ROUND_S and BENCH_SCENARIOS choose how much of it runs; BENCH_BASE_DIR names a built
 * checkout of the base (its ref is then only the label).
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ROUND_S = Number(process.env.BENCH_ROUND_S ?? 10);
/** `BENCH_SCENARIOS='GET /contacts/:id,POST /contacts'` runs those alone (the writes fill the lists and the log the reads page through). */
const ONLY = process.env.BENCH_SCENARIOS?.split(',').map((name) => name.trim());

function patchDealLoad(): Partial<autocannon.Options> {
  let n = 0;
  return {
    method: 'PATCH',
    requests: [{ method: 'PATCH', setupRequest: (req) => ({ ...req, body: JSON.stringify({ value: ++n, name: `Bench deal ${n}` }) }) }],
  };
}

function patchContactLoad(): Partial<autocannon.Options> {
  let n = 0;
  return {
    method: 'PATCH',
    requests: [{ method: 'PATCH', setupRequest: (req) => ({ ...req, body: JSON.stringify({ title: `Bench title ${++n}`, icp_score: n % 100 }) }) }],
  };
}

function createDealsLoad(pipeline: { id: string; stages: Array<{ id: string }> }): Partial<autocannon.Options> {
  let n = 0;
  return {
    method: 'POST',
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => ({
          ...req,
          body: JSON.stringify({ name: `Bench deal ${++n}`, pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: n }),
        }),
      },
    ],
  };
}

/** Every request moves the deal to the other stage (open, then won, then open again), so each is a real move. */
function stageMoveLoad(pipeline: { id: string; stages: Array<{ id: string }> }, through: 'move' | 'patch'): Partial<autocannon.Options> {
  let n = 0;
  const method = through === 'move' ? 'POST' : 'PATCH';
  return {
    method,
    requests: [{ method, setupRequest: (req) => ({ ...req, body: JSON.stringify({ stage_id: pipeline.stages[++n % 2].id }) }) }],
  };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const baseRef = process.argv[2] ?? 'HEAD~1';
  // BENCH_BASE_DIR: a checkout of the base already built, so a run under the machine's bench lock does not build.
  const prebuilt = process.env.BENCH_BASE_DIR;
  const base = prebuilt ? { dir: prebuilt, commit: baseRef, remove: () => undefined } : buildRef(baseRef);
  const current = thisBuild();
  const stacks: Record<string, BenchStack> = {};
  const results: Record<string, Record<string, Array<Row & { cpuUsPerRequest: number }>>> = {};
  try {
    stacks[`base ${base.commit}`] = await startBenchStack(base.dir);
    stacks[`this ${current}`] = await startBenchStack(ROOT);
    const probes: Record<string, string> = {};
    const deals: Record<string, string> = {};
    const moving: Record<string, string> = {};
    const pipelines: Record<string, { id: string; stages: Array<{ id: string }> }> = {};
    for (const [name, stack] of Object.entries(stacks)) {
      probes[name] = (await stack.post('/contacts', { email: `probe-${Date.now()}@bench.example`, first_name: 'Probe' })).id;
      const pipeline: { id: string; stages: Array<{ id: string }> } = await stack.post('/pipelines', {
        name: 'Bench',
        stages: [
          { name: 'Open', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      });
      deals[name] = (await stack.post('/deals', { name: 'Bench deal', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 1 })).id;
      moving[name] = (await stack.post('/deals', { name: 'Moving deal', pipeline_id: pipeline.id, stage_id: pipeline.stages[0].id, value: 1 })).id;
      pipelines[name] = pipeline;
    }
    type Scenario = { name: string; run: (name: string, stack: BenchStack) => Promise<Row> };
    const scenarios = (
      [
        { name: 'GET /contacts/:id', run: (name, s) => load('GET /contacts/:id', `${s.api}/contacts/${probes[name]}`, s.key, {}, '', ROUND_S) },
        { name: 'POST /contacts', run: (_name, s) => load('POST /contacts', `${s.api}/contacts`, s.key, createContactsLoad(), '', ROUND_S) },
        // Every request a new value, so each one is a real change (a same-value PATCH writes nothing).
        { name: 'PATCH /deals/:id', run: (name, s) => load('PATCH /deals/:id', `${s.api}/deals/${deals[name]}`, s.key, patchDealLoad(), '', ROUND_S) },
        {
          name: 'PATCH /contacts/:id',
          run: (name, s) => load('PATCH /contacts/:id', `${s.api}/contacts/${probes[name]}`, s.key, patchContactLoad(), '', ROUND_S),
        },
        { name: 'POST /deals', run: (name, s) => load('POST /deals', `${s.api}/deals`, s.key, createDealsLoad(pipelines[name]), '', ROUND_S) },
        {
          name: 'POST /deals/:id/stage',
          run: (name, s) => load('POST /deals/:id/stage', `${s.api}/deals/${moving[name]}/stage`, s.key, stageMoveLoad(pipelines[name], 'move'), '', ROUND_S),
        },
        {
          name: 'PATCH /deals/:id stage_id',
          run: (name, s) => load('PATCH /deals/:id stage_id', `${s.api}/deals/${moving[name]}`, s.key, stageMoveLoad(pipelines[name], 'patch'), '', ROUND_S),
        },
        // Large replies, after the writes above have filled the log: what the gateway does per byte shows here.
        { name: 'GET /contacts?limit=50', run: (_name, s) => load('GET /contacts?limit=50', `${s.api}/contacts?limit=50`, s.key, {}, '', ROUND_S) },
        { name: 'GET /events?limit=200', run: (_name, s) => load('GET /events?limit=200', `${s.api}/events?limit=200`, s.key, {}, '', ROUND_S) },
      ] satisfies Scenario[]
    ).filter((scenario) => !ONLY || ONLY.includes(scenario.name));
    const names = Object.keys(stacks);
    for (let round = 0; round < ROUNDS; round++) {
      for (const scenario of scenarios) {
        // Alternate who goes first so neither build always runs on a warmer database.
        const order = round % 2 === 0 ? names : [...names].reverse();
        for (const name of order) {
          // Neither stack may still be working off an earlier load, and this load's own aftermath (relay,
          // event log, consumers) is counted with it: without that the build measured first in a round paid
          // for the other's last writes.
          await Promise.all(Object.values(stacks).map((stack) => settledCpuMs(stack)));
          const cpuBefore = stacks[name].cpuMs();
          const row = await scenario.run(name, stacks[name]);
          const cpuAfter = sum(Object.values((await settledCpuMs(stacks[name])).cpu));
          const cpuUsPerRequest = Math.round(((cpuAfter - cpuBefore) * 1000) / Math.max(1, row.total));
          ((results[scenario.name] ??= {})[name] ??= []).push({ ...row, cpuUsPerRequest });
          process.stderr.write(
            `round ${round + 1} ${scenario.name} ${name}: ${row.requests_per_s} req/s p50 ${row.p50_ms} ms, ${cpuUsPerRequest} µs CPU/request (${row.errors} errors)\n`,
          );
        }
      }
    }
  } finally {
    for (const stack of Object.values(stacks)) await stack.stop().catch(() => undefined);
    base.remove();
  }

  const lines = [
    `Run ${new Date().toISOString()} on ${machine()}; ${CONNECTIONS} connections, ${ROUNDS} alternating rounds of ${ROUND_S} s per scenario and build; medians of the rounds.`,
    '',
    '| Scenario | Build | CPU µs/request (all processes) | req/s | p50 ms | p99 ms | errors |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const [scenario, byBuild] of Object.entries(results)) {
    for (const [name, rows] of Object.entries(byBuild)) {
      const errors = rows.reduce((sum, r) => sum + r.errors, 0);
      lines.push(
        `| ${scenario} | ${name} | ${median(rows.map((r) => r.cpuUsPerRequest))} | ${median(rows.map((r) => r.requests_per_s))} | ${median(rows.map((r) => r.p50_ms))} | ${median(rows.map((r) => r.p99_ms))} | ${errors} |`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBenchmark(main);
