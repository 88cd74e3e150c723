import { execFileSync } from 'child_process';
import { readFileSync } from 'fs';
import { join } from 'path';
import { alphanumeric, cpuMs, createContactsLoad, DURATION_S, load, machine, runBenchmark, withBenchStack } from './bench-stack';

/**
 * Where the CPU of one request goes, process by process: the five of the stack, and the PostgreSQL, NATS
 * and Redis servers and the load generator beside them, as CPU microseconds per request over one load
 * (from /proc), plus the whole machine's busy time. On two shared cores that sum, not any one process, is
 * what bounds throughput. `npm run bench:cpu -- get|list|post`; BENCH_NODE_ARGS applies to the stack.
 */
const ROOT = join(__dirname, '..', '..');

function pidsOf(program: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', program], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function cpuOf(pids: number[]): number {
  return pids.reduce((sum, pid) => {
    try {
      return sum + cpuMs(pid);
    } catch {
      return sum; // a backend that ended during the run
    }
  }, 0);
}

/** Busy milliseconds of the whole machine so far (user, nice, system, irq, softirq). */
function machineBusyMs(): number {
  const [user, nice, system, , , irq, softirq] = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq) * 10;
}

async function main(): Promise<void> {
  const scenario = process.argv[2] ?? 'get';
  await withBenchStack(ROOT, async (stack) => {
    const probe = await stack.post('/contacts', { email: `probe-${alphanumeric(6)}@bench.example`, first_name: 'Probe' });
    const targets: Record<string, [string, () => object]> = {
      get: [`/contacts/${probe.id}`, () => ({})],
      list: ['/contacts?limit=50', () => ({})],
      post: ['/contacts', createContactsLoad],
    };
    const [path, options] = targets[scenario] ?? targets.get;
    await load('warm-up', `${stack.api}${path}`, stack.key, options(), '', 3);
    const servers = { postgres: pidsOf('postgres'), nats: pidsOf('nats-server'), redis: pidsOf('redis-server') };
    const processes = () => ({
      ...Object.fromEntries(Object.entries(stack.children).map(([app, child]) => [app, cpuMs(child.pid!)])),
      ...Object.fromEntries(Object.entries(servers).map(([name, pids]) => [name, cpuOf(pids)])),
    });
    const before = processes();
    const selfBefore = process.cpuUsage();
    const busyBefore = machineBusyMs();
    const row = await load(scenario, `${stack.api}${path}`, stack.key, options(), '', DURATION_S);
    const busy = machineBusyMs() - busyBefore;
    const self = process.cpuUsage(selfBefore);
    const after = processes();
    const perRequest = (ms: number) => Math.round((ms * 1000) / Math.max(1, row.total));
    const columns: Array<[string, number]> = [
      ...Object.keys(before).map((name): [string, number] => [name, perRequest(after[name] - before[name])]),
      ['load generator', Math.round((self.user + self.system) / Math.max(1, row.total))],
      ['whole machine', perRequest(busy)],
    ];
    process.stdout.write(
      [
        `Run ${new Date().toISOString()} on ${machine()}; ${scenario}: ${row.requests_per_s} req/s, p50 ${row.p50_ms} ms, p99 ${row.p99_ms} ms, ${row.errors} errors.`,
        '',
        `| CPU µs per request | ${columns.map(([name]) => name).join(' | ')} |`,
        `|---|${columns.map(() => '---:').join('|')}|`,
        `| ${scenario} | ${columns.map(([, us]) => us).join(' | ')} |`,
        '',
      ].join('\n'),
    );
  });
}

runBenchmark(main);
