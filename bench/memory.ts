import { join } from 'path';
import { alphanumeric, APPS, createContactsLoad, Heap, heapOf, load, machine, metricsUrls, runBenchmark, withBenchStack } from './bench-stack';

/**
 * Resident memory of each process idle and after load, beside what V8 reports of its heap (live objects
 * and the heap it keeps), so growth can be told apart from what is really held. `npm run bench:memory`;
 * BENCH_NODE_ARGS tries V8 settings, e.g. `--max-semi-space-size=8`.
 */
const ROOT = join(__dirname, '..', '..');
const LOAD_S = Number(process.env.BENCH_MEMORY_LOAD_S ?? 10);

async function main(): Promise<void> {
  await withBenchStack(ROOT, async (stack) => {
    const metricsUrl = metricsUrls(stack);
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
