import { createServer, Server } from 'http';
import { join } from 'path';
import { APPS, BenchStack, buildRef, cpuMs, machine, percentile, rssMiB, runBenchmark, startBenchStack, thisBuild } from './bench-stack';
import { knobs } from './knobs';

/**
 * What an idle deployment costs, this build beside an earlier one in the same run: both stacks start
 * together, each with one webhook subscription, a contact and a deal (a deployment with a little in
 * it), sit with nothing to do for IDLE_SETTLE_S, and then each process's CPU (user + system, from
 * /proc/<pid>/stat) is read over IDLE_WINDOWS windows of IDLE_WINDOW_S, both builds in the same windows,
 * so the machine's other load falls on both alike. Resident memory is read at the end of the windows.
 * Then the latencies the sleeping must not cost, IDLE_PROBES times per build, one write at a time with
 * quiet between: a contact's creation to its webhook's arrival, and a contact's deletion to the commit
 * of the deals service's clean-up (the occurred_at of its deal.contact_removed).
 * `npm run bench:idle -- <git ref>` (default HEAD~1).
 */
const ROOT = join(__dirname, '..', '..');
const { SETTLE_S, WINDOW_S, WINDOWS, PROBES } = knobs('IDLE_', { SETTLE_S: 30, WINDOW_S: 60, WINDOWS: 3, PROBES: 40 });
const PROBE_GAP_MS = 300;

const wallClock = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (values: number[]) => percentile(values, 50);

interface Probe {
  stack: BenchStack;
  pipeline: { id: string; stages: Array<{ id: string }> };
  /** Arrival wall-clock time per contact id (contact.created) and the clean-up's occurred_at per contact id (deal.contact_removed). */
  created: Map<string, number>;
  cleaned: Map<string, number>;
  waiters: Map<string, () => void>;
}

/** One receiver for both stacks: each subscription's URL ends in its stack's index. */
function receiver(probes: Probe[]): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const arrived = wallClock();
      const event = JSON.parse(body) as { type: string; occurred_at: string; data: { contact_id?: string } };
      const p = probes[Number(req.url?.slice(1))];
      const id = event.data.contact_id;
      if (id && event.type === 'contact.created') p.created.set(id, arrived);
      if (id && event.type === 'deal.contact_removed') p.cleaned.set(id, Date.parse(event.occurred_at));
      if (id) p.waiters.get(`${event.type} ${id}`)?.();
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function arrival(p: Probe, type: string, id: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${type} for ${id} did not arrive`)), timeoutMs);
    p.waiters.set(`${type} ${id}`, () => {
      clearTimeout(timer);
      p.waiters.delete(`${type} ${id}`);
      resolve();
    });
  });
}

/** One write to webhook and one deletion to clean-up; answers both latencies in ms. */
async function probeOnce(p: Probe, n: number): Promise<{ webhookMs: number; cleanupMs: number }> {
  const sent = wallClock();
  const createdArrived = arrivalOf(p, 'contact.created');
  const contact = await p.stack.post('/contacts', { email: `idle-${n}-${Date.now()}@bench.example`, first_name: 'Idle' });
  await createdArrived(contact.id);
  const webhookMs = p.created.get(contact.id)! - sent;
  await p.stack.post('/deals', { name: `Idle ${n}`, pipeline_id: p.pipeline.id, stage_id: p.pipeline.stages[0].id, value: 1, contact_id: contact.id });
  await sleep(PROBE_GAP_MS);
  const cleaned = arrival(p, 'deal.contact_removed', contact.id);
  const deleting = wallClock();
  const res = await fetch(`${p.stack.api}/contacts/${contact.id}`, { method: 'DELETE', headers: { 'X-Api-Key': p.stack.key } });
  if (!res.ok) throw new Error(`DELETE /contacts/${contact.id}: ${res.status}`);
  await cleaned;
  return { webhookMs, cleanupMs: p.cleaned.get(contact.id)! - deleting };
}

/** Waits for `type` of an id known only once the write answers; an arrival before that is found in the map. */
function arrivalOf(p: Probe, type: string): (id: string) => Promise<void> {
  return async (id) => {
    if (!p.created.has(id)) await arrival(p, type, id);
  };
}

async function main(): Promise<void> {
  const baseRef = process.argv[2] ?? 'HEAD~1';
  const base = buildRef(baseRef);
  const builds: Array<{ name: string; root: string }> = [
    { name: `before ${base.commit}`, root: base.dir },
    { name: `after ${thisBuild()}`, root: ROOT },
  ];
  const probes: Probe[] = [];
  const server = await receiver(probes);
  const port = (server.address() as { port: number }).port;
  const cpu: Array<Record<string, number[]>> = builds.map(() => Object.fromEntries(APPS.map((app) => [app, []])));
  let rss: Array<Record<string, number>> = [];
  const latency: Array<{ webhook: number[]; cleanup: number[] }> = builds.map(() => ({ webhook: [], cleanup: [] }));
  try {
    for (const build of builds) {
      const stack = await startBenchStack(build.root, { env: { LOG_LEVEL: 'error' } });
      const pipeline = await stack.post('/pipelines', {
        name: 'Idle',
        stages: [
          { name: 'Open', type: 'open' },
          { name: 'Won', type: 'won' },
        ],
      });
      await stack.post('/webhooks', {
        name: 'idle',
        url: `http://127.0.0.1:${port}/${probes.length}`,
        event_types: ['contact.created', 'deal.contact_removed'],
      });
      probes.push({ stack, pipeline, created: new Map(), cleaned: new Map(), waiters: new Map() });
    }
    // One probe each so every path has run once before the quiet.
    for (const p of probes) await probeOnce(p, -1);
    process.stderr.write(`both stacks up; idle for ${SETTLE_S} s, then ${WINDOWS} windows of ${WINDOW_S} s\n`);
    await sleep(SETTLE_S * 1000);
    const read = () => probes.map((p) => Object.fromEntries(APPS.map((app) => [app, cpuMs(p.stack.children[app].pid!)])));
    for (let w = 0; w < WINDOWS; w++) {
      const before = read();
      const started = performance.now();
      await sleep(WINDOW_S * 1000);
      const after = read();
      const seconds = (performance.now() - started) / 1000;
      probes.forEach((_p, i) => APPS.forEach((app) => cpu[i][app].push((after[i][app] - before[i][app]) / seconds)));
      process.stderr.write(
        `window ${w + 1}: ${builds.map((b, i) => `${b.name} ${APPS.reduce((sum, app) => sum + cpu[i][app][w], 0).toFixed(1)} ms/s`).join(', ')}\n`,
      );
    }
    rss = probes.map((p) => Object.fromEntries(APPS.map((app) => [app, rssMiB(p.stack.children[app].pid!)])));
    for (let n = 0; n < PROBES; n++) {
      // Alternate who goes first, with quiet between, so neither build rides the other's warm caches.
      for (const i of n % 2 === 0 ? [0, 1] : [1, 0]) {
        const { webhookMs, cleanupMs } = await probeOnce(probes[i], n);
        latency[i].webhook.push(webhookMs);
        latency[i].cleanup.push(cleanupMs);
        await sleep(PROBE_GAP_MS);
      }
    }
  } finally {
    for (const p of probes) await p.stack.stop().catch(() => undefined);
    server.close();
    base.remove();
  }

  const fixed = (n: number) => n.toFixed(1);
  const total = (i: number, of: (app: string) => number) => APPS.reduce((sum, app) => sum + of(app), 0);
  const lines = [
    `Run ${new Date().toISOString()} on ${machine()}; after ${SETTLE_S} s idle, ${WINDOWS} windows of ${WINDOW_S} s, both builds in the same windows; medians of the windows.`,
    '',
    `| Process | CPU ms/s ${builds[0].name} | CPU ms/s ${builds[1].name} | RSS MiB ${builds[0].name} | RSS MiB ${builds[1].name} |`,
    '|---|---:|---:|---:|---:|',
    ...APPS.map((app) => `| ${app} | ${fixed(median(cpu[0][app]))} | ${fixed(median(cpu[1][app]))} | ${rss[0][app]} | ${rss[1][app]} |`),
    `| all five | ${fixed(total(0, (app) => median(cpu[0][app])))} | ${fixed(total(1, (app) => median(cpu[1][app])))} | ${total(0, (app) => rss[0][app])} | ${total(1, (app) => rss[1][app])} |`,
    '',
    `Latency, ${PROBES} probes per build, one at a time (ms):`,
    '',
    '| Build | write → webhook p50 | p99 | max | contact deletion → deals clean-up p50 | p99 | max |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...builds.map(
      (b, i) =>
        `| ${b.name} | ${fixed(median(latency[i].webhook))} | ${fixed(percentile(latency[i].webhook, 99))} | ${fixed(Math.max(...latency[i].webhook))} | ${fixed(median(latency[i].cleanup))} | ${fixed(percentile(latency[i].cleanup, 99))} | ${fixed(Math.max(...latency[i].cleanup))} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBenchmark(main);
