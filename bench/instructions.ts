import { execFileSync } from 'child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { APPS, BenchApp, BenchStack, buildRef, ROOT, runBenchmark, settledCpuMs, STACK_HOST, startBenchStack, thisBuild } from './bench-stack';
import { Inspector } from './inspector';
import { report, ReportSettings, Results, SLICES, sum, Window } from './instruction-report';

/**
 * Instructions executed per request on the single-write paths, this build against an earlier commit:
 * `npm run bench:instructions -- <git ref>` (default HEAD~1).
 *
 * CPU time per request on a shared machine moves by tens of percent from one round to the next; the number of
 * instructions a request makes the processes execute does not move with the machine's load. Each node process of
 * the stack runs under valgrind's callgrind tool with its instrumentation off (start-up and warm-up at a few times
 * native speed), so for each scenario the bench: sends N requests one after another (the JIT warms up on the very
 * paths measured), waits until the stack is quiet (outbox relayed, events appended, webhooks matched), runs a full
 * collection in every process through the inspector, switches instrumentation on and zeroes the counters, sends N
 * more requests (the same bodies in both builds), waits until quiet again, and dumps: the total instructions (Ir,
 * all threads: JIT code, the interpreter, V8's compiler and collector threads, libuv and OpenSSL) per process,
 * divided by N. PostgreSQL, NATS and Redis are not counted; they are the same programs for both builds.
 *
 * The table splits each count by thread (callgrind_annotate on the dumps): V8's platform worker threads mostly
 * run optimising compilation, which after N warm-up requests is still about half of all instructions and comes in
 * bursts as functions turn hot; the main threads run the requests' own work (and timers, pollers). The main-thread
 * count is the one to compare; the all-thread count shows how much warm-up still moves.
 *
 * Builds alternate, each on its own fresh stack and database with the same setup, and the whole is repeated
 * BENCH_ROUNDS times (default 2) so the spread between a build's rounds shows how stable the count is. A quiet
 * window of BENCH_INSTR_IDLE_S seconds per stack (default 10) right after start-up sets the quiet thresholds, and
 * another after the scenarios gives the instructions the warm stack executes a second with no request (timers,
 * pollers): what a measured window includes in proportion to its length.
 *
 * BENCH_INSTR_N (default 200) requests per window; BENCH_SCENARIOS picks scenarios by name; BENCH_INSTR_APPS the
 * processes run under valgrind (default all five; the others run natively and are not counted); BENCH_BASE_DIR a
 * built checkout of the base; BENCH_INSTR_DIR where the callgrind dumps are kept (for callgrind_annotate; default a
 * new directory under the system's temporary directory); BENCH_INSTR_RESULTS a JSON file that collects the rounds
 * of several runs (each run adds its rounds and prints the table over all of them), so a long measurement can be
 * split into parts (BENCH_INSTR_BUILD=base or this runs one build's stacks alone).
 *
 * BENCH_INSTR_WINDOW_S gives every window, idle ones too, the same length whatever the machine's speed: the requests
 * are paced over its first 60% and the rest lets the stack go quiet. Every window is dumped in SLICES slices, one file
 * per thread. What the processes run by the clock (pollers, lease renewals, the relay's poll) is then charged at the
 * stack's settled idle rate over the same length, and the table gives each window less that, per request: the
 * requests' own instructions, and how the window's last slice compares with an idle one (back at rest or not). It
 * also charges each process its own rest instead, the mean of the window's last slices, measured seconds after the
 * requests rather than minutes later: where the two charges disagree, the clock's work is the uncertainty. Without it, a window lasts
 * as long as the requests take, and a slower machine or build counts more of its timers.
 *
 * BENCH_INSTR_FUNCTIONS=<process> (with fixed-length windows) also counts that process's main thread by function,
 * JavaScript included (callgrind's per-instruction counts joined with V8's code map, bench/callgrind-functions.ts), and
 * the report lists per scenario the 25 functions whose own instructions per request differ most between the builds.
 */
const N = Number(process.env.BENCH_INSTR_N ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const IDLE_S = Number(process.env.BENCH_INSTR_IDLE_S ?? 10);
const ONLY = process.env.BENCH_SCENARIOS?.split(',').map((name) => name.trim());
const COUNTED = (process.env.BENCH_INSTR_APPS?.split(',').map((app) => app.trim()) ?? APPS) as BenchApp[];
const RESULTS_FILE = process.env.BENCH_INSTR_RESULTS;
/** `base` or `this`: only that build's stacks in this run (with BENCH_INSTR_RESULTS, to keep each part short). */
const ONLY_BUILD = process.env.BENCH_INSTR_BUILD;
/** Set: measure nothing, print the table over the rounds BENCH_INSTR_RESULTS holds (their dumps must still be there). */
const REPORT_ONLY = !!process.env.BENCH_INSTR_REPORT;
const VALGRIND = process.env.BENCH_VALGRIND ?? 'valgrind';
const WINDOW_S = process.env.BENCH_INSTR_WINDOW_S ? Number(process.env.BENCH_INSTR_WINDOW_S) : undefined;
/** The share of a fixed window the requests are paced over. */
const PACED_SHARE = 0.6;
/** With fixed-length windows, one process whose main-thread instructions are also counted by function, JavaScript included (bench/callgrind-functions.ts). */
const BY_FUNCTION = process.env.BENCH_INSTR_FUNCTIONS as BenchApp | undefined;
const settings: ReportSettings = { counted: COUNTED, windowS: WINDOW_S, byFunction: BY_FUNCTION, requests: N };
/**
 * Quiet under valgrind: the whole stack uses at most 60 ms of CPU in a second, or, while instrumented (when its
 * timers alone cost more), no more than half as much again as it did idle, for up to 2 minutes.
 */
const QUIET = { quietMs: 60, windowMs: 1000, maxMs: 120_000 };

interface Setup {
  contact: string;
  pipeline: string;
  stages: [string, string];
  moving: string;
}

interface Scenario {
  name: string;
  method: string;
  path(setup: Setup): string;
  /** The i-th request's body; `batch` ('w' warm-up, 'm' measured) keeps created records unique at equal length. */
  body(setup: Setup, batch: string, i: number): unknown;
}

const pad = (i: number) => String(i).padStart(5, '0');

const SCENARIOS: Scenario[] = [
  {
    name: 'POST /contacts',
    method: 'POST',
    path: () => '/contacts',
    body: (_s, batch, i) => ({ email: `c${batch}${pad(i)}@bench.example`, first_name: 'Bench', stage: 'lead' }),
  },
  {
    name: 'PATCH /contacts/:id',
    method: 'PATCH',
    path: (s) => `/contacts/${s.contact}`,
    // Every request a new value, so each one is a real change (a same-value PATCH writes nothing).
    body: (_s, batch, i) => ({ title: `Bench title ${batch}${pad(i)}`, icp_score: i % 100 }),
  },
  {
    name: 'POST /deals',
    method: 'POST',
    path: () => '/deals',
    body: (s, batch, i) => ({ name: `Bench deal ${batch}${pad(i)}`, pipeline_id: s.pipeline, stage_id: s.stages[0], value: i + 1 }),
  },
  {
    name: 'POST /deals/:id/stage',
    method: 'POST',
    path: (s) => `/deals/${s.moving}/stage`,
    // Open, won, open again: every request a real move (the warm-up and measured batches are both even in length).
    body: (s, _batch, i) => ({ stage_id: s.stages[(i + 1) % 2] }),
  },
];

/** Where valgrind and callgrind_control meet (vgdb's pipes), beside the dumps rather than in the shared temporary directory. */
const vgdbPrefix = (dumpDir: string) => `--vgdb-prefix=${join(dumpDir, 'vgdb')}`;

function callgrind(dumpDir: string, pid: number, ...args: string[]): void {
  // vgdb's pipe names carry $HOST, which the stack sets for its processes to the address they listen on.
  execFileSync('callgrind_control', [vgdbPrefix(dumpDir), ...args, String(pid)], { stdio: 'pipe', env: { ...process.env, HOST: STACK_HOST } });
}

/** The newest dump a process has written (callgrind numbers them `<file>.1`, `<file>.2`, …). */
function latestDump(dir: string, prefix: string): string {
  const numbered = readdirSync(dir)
    .filter((name) => name.startsWith(`${prefix}.`) && /\.\d+$/.test(name))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
  if (!numbered.length) throw new Error(`no callgrind dump ${prefix}.* in ${dir}`);
  return join(dir, numbered[numbered.length - 1]);
}

function totalIr(file: string): number {
  const text = readFileSync(file, 'utf8');
  const total = /^(?:totals|summary):\s*(\d+)/m.exec(text);
  if (!total) throw new Error(`${file} has no totals`);
  return Number(total[1]);
}

/** A dump's count per thread (`<file>.<dump>-<thread>`, `--separate-threads=yes`): the main thread's and all together. Worker-thread files are removed once read. */
function sliceCount(dir: string, prefix: string, dump: number): { main: number; all: number; mainFile: string } {
  const files = readdirSync(dir).filter((name) => name.startsWith(`${prefix}.${dump}-`));
  const main = files.find((name) => name.endsWith('-01'));
  if (!main) throw new Error(`no main-thread dump ${prefix}.${dump}-01 in ${dir}`);
  let all = 0;
  for (const name of files) {
    all += totalIr(join(dir, name));
    if (name !== main) rmSync(join(dir, name));
  }
  return { main: totalIr(join(dir, main)), all, mainFile: join(dir, main) };
}

async function request(stack: BenchStack, method: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(`${stack.api}${path}`, {
    method,
    headers: { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: any }).data;
}

async function send(stack: BenchStack, setup: Setup, scenario: Scenario, batch: string): Promise<void> {
  for (let i = 0; i < N; i++) await request(stack, scenario.method, scenario.path(setup), scenario.body(setup, batch, i));
}

const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - performance.now())));

/** N requests one after another, the i-th sent no earlier than i/N of `spanMs` after the start (later if the one before is slow). */
async function sendPaced(stack: BenchStack, setup: Setup, scenario: Scenario, batch: string, spanMs: number): Promise<void> {
  const start = performance.now();
  for (let i = 0; i < N; i++) {
    await sleepUntil(start + (i * spanMs) / N);
    await request(stack, scenario.method, scenario.path(setup), scenario.body(setup, batch, i));
  }
}

/** A full collection in every counted process, so each window starts from a collected heap. */
async function collectGarbage(stack: BenchStack): Promise<void> {
  for (const app of COUNTED) {
    const inspector = await Inspector.connect(stack.inspectPorts[app]!);
    try {
      await inspector.send('HeapProfiler.collectGarbage');
    } finally {
      inspector.close();
    }
  }
}

async function stopAndWait(stack: BenchStack): Promise<void> {
  const exited = Object.values(stack.children).map(
    (child) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()))),
  );
  await stack.stop();
  const killAfter = setTimeout(() => Object.values(stack.children).forEach((child) => child.kill('SIGKILL')), 60_000);
  await Promise.all(exited);
  clearTimeout(killAfter);
}

/** One build's stack: every scenario's warm-up and measured window, and an idle window. */
async function measureBuild(build: string, root: string, round: number, dumpDir: string): Promise<Window[]> {
  const tag = `r${round + 1}-${build.replace(/[^a-z0-9]/gi, '')}`;
  const stack = await startBenchStack(root, {
    inspect: true,
    startTimeoutMs: 900_000,
    // A request under instrumentation takes up to seconds; the gateway's wait for a service is stretched to match.
    env: { RPC_TIMEOUT_MS: '60000', ...(BY_FUNCTION ? { NODE_OPTIONS: '--perf-basic-prof' } : {}) },
    launcher: (app) =>
      COUNTED.includes(app)
        ? [
            VALGRIND,
            '--tool=callgrind',
            // Start-up and warm-up uninstrumented (a few times native speed); switched on per window.
            '--instr-atstart=no',
            // V8 writes and rewrites machine code in anonymous memory: valgrind must notice.
            '--smc-check=all-non-file',
            // Fixed-length windows are read per thread from the files, without annotating each slice's dump.
            ...(WINDOW_S ? ['--separate-threads=yes'] : []),
            ...(app === BY_FUNCTION ? ['--dump-instr=yes'] : []),
            `--callgrind-out-file=${join(dumpDir, `${tag}-${app}.%p`)}`,
            `--log-file=${join(dumpDir, `${tag}-${app}.%p.log`)}`,
            vgdbPrefix(dumpDir),
          ]
        : [],
  });
  const windows: Window[] = [];
  // Instrumented, the stack's timers and pollers alone cost more CPU than the uninstrumented quiet threshold: the
  // idle window measures how much, and a measured window ends once the stack is back near that.
  let quietMs = QUIET.quietMs;
  let instrumentedQuietMs = QUIET.quietMs;
  /** Dumps each process has written, which numbers its next one. */
  const dumpsOf = new Map<number, number>();
  const window = async (scenario: string, requests: number, work: () => Promise<void>) => {
    await settledCpuMs(stack, { ...QUIET, quietMs });
    await collectGarbage(stack);
    await settledCpuMs(stack, { ...QUIET, quietMs });
    const pids = COUNTED.map((app) => stack.children[app].pid!);
    for (const pid of pids) callgrind(dumpDir, pid, '--instr=on');
    for (const pid of pids) callgrind(dumpDir, pid, '--zero');
    const started = performance.now();
    if (WINDOW_S) {
      let lastAnsweredS: number | undefined;
      let failed: unknown;
      const working = work().then(
        () => (lastAnsweredS = (performance.now() - started) / 1000),
        (err) => (failed = err),
      );
      const sliceMain: Partial<Record<BenchApp, number[]>> = Object.fromEntries(COUNTED.map((app) => [app, []]));
      const sliceAll: Partial<Record<BenchApp, number[]>> = Object.fromEntries(COUNTED.map((app) => [app, []]));
      const functionDumps: string[] = [];
      for (let slice = 1; slice <= SLICES; slice++) {
        await sleepUntil(started + (slice * WINDOW_S * 1000) / SLICES);
        for (const pid of pids) callgrind(dumpDir, pid, '--dump');
        for (const app of COUNTED) {
          const pid = stack.children[app].pid!;
          dumpsOf.set(pid, (dumpsOf.get(pid) ?? 0) + 1);
          const { main, all, mainFile } = sliceCount(dumpDir, `${tag}-${app}.${pid}`, dumpsOf.get(pid)!);
          if (app === BY_FUNCTION) functionDumps.push(mainFile);
          sliceMain[app]!.push(main);
          sliceAll[app]!.push(all);
        }
      }
      await working;
      for (const pid of pids) callgrind(dumpDir, pid, '--instr=off');
      if (failed) throw failed;
      const seconds = (performance.now() - started) / 1000;
      const ir = Object.fromEntries(COUNTED.map((app) => [app, sum(sliceAll[app]!)]));
      // The code map is copied beside the dumps once the process has ended (V8 appends to it until then).
      const byFunction = BY_FUNCTION ? { dumps: functionDumps, codeMap: join(dumpDir, `${tag}-${BY_FUNCTION}.perf.map`) } : undefined;
      windows.push({ round, build, scenario, requests, seconds, ir, dumps: [], lastAnsweredS, sliceMain, sliceAll, byFunction });
      const mainPerSlice = Array.from({ length: SLICES }, (_, i) => sum(COUNTED.map((app) => sliceMain[app]![i])));
      process.stderr.write(
        `round ${round + 1} ${build} ${scenario}: last answer at ${lastAnsweredS!.toFixed(0)} s; main threads, M instructions a slice: ${mainPerSlice.map((n) => (n / 1e6).toFixed(1)).join(' ')}\n`,
      );
      return;
    }
    await work();
    if (requests) await settledCpuMs(stack, { ...QUIET, quietMs: instrumentedQuietMs });
    const seconds = (performance.now() - started) / 1000;
    for (const pid of pids) callgrind(dumpDir, pid, '--dump');
    for (const pid of pids) callgrind(dumpDir, pid, '--instr=off');
    const dumps = COUNTED.map((app) => latestDump(dumpDir, `${tag}-${app}.${stack.children[app].pid}`));
    const ir = Object.fromEntries(COUNTED.map((app, i) => [app, totalIr(dumps[i])]));
    windows.push({ round, build, scenario, requests, seconds, ir, dumps });
    const perRequest = requests ? Object.values(ir).reduce((a, b) => a + b, 0) / requests : 0;
    process.stderr.write(
      `round ${round + 1} ${build} ${scenario}: ${Math.round(perRequest).toLocaleString('en')} instructions/request, ${seconds.toFixed(0)} s\n`,
    );
  };
  /** CPU the stack uses in a quiet window over `seconds`, and the threshold half as much again. */
  const idleCpu = async (seconds: number) => {
    const [cpu, at] = [stack.cpuMs(), performance.now()];
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const perWindow = ((stack.cpuMs() - cpu) / (performance.now() - at)) * QUIET.windowMs;
    return { perWindow: Math.round(perWindow), threshold: Math.max(QUIET.quietMs, Math.round(perWindow * 1.5)) };
  };
  /** Idle and instrumented: the first half lets valgrind re-instrument what the timers run, the second is timed. */
  const idle = async () => {
    await new Promise((r) => setTimeout(r, (IDLE_S * 1000) / 2));
    const { perWindow, threshold } = await idleCpu(IDLE_S / 2);
    instrumentedQuietMs = threshold;
    process.stderr.write(`${build}: instrumented and idle, ${perWindow} ms CPU a ${QUIET.windowMs} ms window; quiet below ${threshold}\n`);
  };
  try {
    const contact = (await request(stack, 'POST', '/contacts', { email: 'probe@bench.example', first_name: 'Probe' })).id;
    const pipeline = await request(stack, 'POST', '/pipelines', {
      name: 'Bench',
      stages: [
        { name: 'Open', type: 'open' },
        { name: 'Won', type: 'won' },
      ],
    });
    const stages = pipeline.stages.map((stage: { id: string }) => stage.id) as [string, string];
    const moving = (await request(stack, 'POST', '/deals', { name: 'Moving deal', pipeline_id: pipeline.id, stage_id: stages[0], value: 1 })).id;
    const setup: Setup = { contact, pipeline: pipeline.id, stages, moving };
    // Even uninstrumented, valgrind's processes idle above the default threshold: measured after start-up settles.
    await settledCpuMs(stack, { ...QUIET, maxMs: 30_000 });
    const uninstrumented = await idleCpu(IDLE_S / 2);
    quietMs = uninstrumented.threshold;
    process.stderr.write(`${build}: idle, ${uninstrumented.perWindow} ms CPU a ${QUIET.windowMs} ms window; quiet below ${quietMs}\n`);
    const idleFor = (seconds: number) => () => new Promise<void>((r) => setTimeout(r, seconds * 1000));
    await window('idle', 0, WINDOW_S ? idleFor(WINDOW_S) : idle);
    for (const scenario of SCENARIOS.filter((s) => !ONLY || ONLY.includes(s.name))) {
      await send(stack, setup, scenario, 'w');
      await window(scenario.name, N, () =>
        WINDOW_S ? sendPaced(stack, setup, scenario, 'm', WINDOW_S * 1000 * PACED_SHARE) : send(stack, setup, scenario, 'm'),
      );
    }
    // Idle again once warm: what timers and pollers alone execute, the part of a window that grows with its length.
    await window('idle, warm', 0, idleFor(WINDOW_S ?? IDLE_S));
  } finally {
    await stopAndWait(stack);
    if (BY_FUNCTION) copyFileSync(`/tmp/perf-${stack.children[BY_FUNCTION].pid}.map`, join(dumpDir, `${tag}-${BY_FUNCTION}.perf.map`));
  }
  return windows;
}

async function main(): Promise<void> {
  if (REPORT_ONLY) {
    if (!RESULTS_FILE) throw new Error('BENCH_INSTR_REPORT needs BENCH_INSTR_RESULTS');
    const results: Results = JSON.parse(readFileSync(RESULTS_FILE, 'utf8'));
    process.stdout.write(`${report(results, process.env.BENCH_INSTR_DIR ?? '(where the run put them)', settings)}\n`);
    return;
  }
  const baseRef = process.argv[2] ?? 'HEAD~1';
  const prebuilt = process.env.BENCH_BASE_DIR;
  const base = prebuilt ? { dir: prebuilt, commit: baseRef, remove: () => undefined } : buildRef(baseRef);
  const current = thisBuild();
  const dumpDir = process.env.BENCH_INSTR_DIR ?? mkdtempSync(join(tmpdir(), 'crm-instructions-'));
  mkdirSync(dumpDir, { recursive: true });
  const results: Results =
    RESULTS_FILE && existsSync(RESULTS_FILE) ? JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) : { base: base.commit, current, windows: [] };
  if (results.base !== base.commit || results.current !== current) throw new Error(`${RESULTS_FILE} holds ${results.base} against ${results.current}`);
  // Each build's rounds are numbered on from the ones the results file holds for it.
  const first = (build: string) => new Set(results.windows.filter((w) => w.build === build).map((w) => w.round)).size;
  try {
    const builds: Array<[string, string]> = (
      [
        [`base ${base.commit}`, base.dir],
        [`this ${current}`, ROOT],
      ] as Array<[string, string]>
    ).filter(([build]) => !ONLY_BUILD || build.startsWith(`${ONLY_BUILD} `));
    const start = Math.min(...builds.map(([build]) => first(build)));
    for (let round = start; round < start + ROUNDS; round++) {
      // Alternate who goes first.
      for (const [build, root] of round % 2 === 0 ? builds : [...builds].reverse()) {
        results.windows.push(...(await measureBuild(build, root, round, dumpDir)));
        if (RESULTS_FILE) writeFileSync(RESULTS_FILE, JSON.stringify(results, null, 1));
      }
    }
  } finally {
    base.remove();
  }
  process.stdout.write(`${report(results, dumpDir, settings)}\n`);
}

runBenchmark(main);
