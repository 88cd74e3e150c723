import { join } from 'path';
import { alphanumeric, APPS, createContactsLoad, load, machine, rssMiB, runBenchmark, withBenchStack } from './bench-stack';

/**
 * Resident memory of each process idle and after load, beside what V8 reports of its heap (live objects
 * and the heap it keeps), so growth can be told apart from what is really held. `npm run bench:memory`;
 * BENCH_NODE_ARGS tries V8 settings, e.g. `--max-semi-space-size=8`.
 */
const ROOT = join(__dirname, '..', '..');
const LOAD_S = Number(process.env.BENCH_MEMORY_LOAD_S ?? 10);

interface Heap {
  rss: number;
  heapUsed: number;
  heapTotal: number;
}

const MiB = 2 ** 20;

async function heapOf(metricsUrl: string, pid: number): Promise<Heap> {
  const text = await (await fetch(metricsUrl)).text();
  const gauge = (name: string) => Math.round(Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) / MiB);
  return { rss: rssMiB(pid), heapUsed: gauge('nodejs_heap_size_used_bytes'), heapTotal: gauge('nodejs_heap_size_total_bytes') };
}

async function main(): Promise<void> {
  await withBenchStack(ROOT, async (stack) => {
    const port = Number(new URL(stack.api).port);
    // The gateway serves /metrics itself; each service on its health port (PORT + 1 … + 4, as bench-stack sets them).
    const metricsUrl: Record<string, string> = { gateway: `${stack.api}/metrics` };
    APPS.filter((app) => app !== 'gateway').forEach((app, i) => (metricsUrl[app] = `http://127.0.0.1:${port + 1 + i}/metrics`));
    const snapshot = async () =>
      Object.fromEntries(await Promise.all(APPS.map(async (app) => [app, await heapOf(metricsUrl[app], stack.children[app].pid!)] as const)));
    const idle = await snapshot();
    const probe = await stack.post('/contacts', { email: `probe-${alphanumeric(6)}@bench.example`, first_name: 'Probe' });
    await load('POST /contacts', `${stack.api}/contacts`, stack.key, createContactsLoad(), '', LOAD_S);
    await load('GET /contacts/:id', `${stack.api}/contacts/${probe.id}`, stack.key, {}, '', LOAD_S);
    await load('GET /contacts?limit=50', `${stack.api}/contacts?limit=50`, stack.key, {}, '', LOAD_S);
    await load('GET /events?limit=200', `${stack.api}/events?limit=200`, stack.key, {}, '', LOAD_S);
    const loaded = await snapshot();
    await new Promise((r) => setTimeout(r, 10_000));
    const rested = await snapshot();
    const cell = (h: Heap) => `${h.rss} (${h.heapUsed} / ${h.heapTotal})`;
    process.stdout.write(
      [
        `Run ${new Date().toISOString()} on ${machine()}; node flags: ${process.env.BENCH_NODE_ARGS || 'none'}; ${LOAD_S} s each of POST /contacts, GET /contacts/:id, GET /contacts?limit=50, GET /events?limit=200.`,
        '',
        '| MiB: resident (heap used / heap kept) | idle | after the loads | 10 s later |',
        '|---|---:|---:|---:|',
        ...APPS.map((app) => `| ${app} | ${cell(idle[app])} | ${cell(loaded[app])} | ${cell(rested[app])} |`),
        '',
      ].join('\n'),
    );
  });
}

runBenchmark(main);
