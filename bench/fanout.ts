import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { readFileSync } from 'fs';
import { Agent, createServer, request, Server } from 'http';
import { loadavg } from 'os';
import { Webhook } from 'standardwebhooks';
import { alphanumeric, BenchStack, buildRef, cpuMs, machine, percentile, ROOT, runBenchmark, startBenchStack, thisBuild } from './bench-stack';
import { DeliveryTally, filterOf, holdLock, Slots } from './filters-support';
import { knobs } from './knobs';

/**
 * Webhook fan-out: many subscriptions to one local receiver, beside a bare keep-alive client posting the
 * same number of signed bodies of the same size to the same receiver (the wire's rate on this machine).
 *
 * `npm run bench:fanout -- [<git ref> …]`: each ref is built beside this tree (or `<label>=<dir>`, a checkout
 * built already) and run on a stack of its own,
 * then this tree (unless `BENCH_FANOUT_THIS=0`); every stack is up at once and each phase runs on one stack
 * after the other, so the builds of one run see the same machine. A phase is `<subscriptions>[f]:<writes a
 * second>:<seconds>` in `BENCH_FANOUT_PHASES`: that many subscriptions to contact.created (created as
 * needed, never removed), `f` with the filters of `npm run bench:filters` (100 groups of three conditions,
 * one write in ten matches a group), `POST /contacts` at a fixed rate, open loop, on at most
 * `BENCH_WRITE_CONNECTIONS` connections. Each phase prints deliveries a second (from the first arrival to
 * the last), write to delivery p50/p99, the webhooks processes' CPU per delivery, what did not arrive, what
 * should not have and what came twice, and the bare client's rate for the same count of bodies
 * (`BENCH_BARE_CONNECTIONS` sockets). `BENCH_WEBHOOKS_REPLICAS` starts more webhooks processes per stack, and
 * `<ref>@<n>` n for that build's stack alone, so one build can run beside itself with one and two replicas.
 */
const K = knobs('BENCH_', { WRITE_CONNECTIONS: 64, BARE_CONNECTIONS: 32, DRAIN_S: 300, WEBHOOKS_REPLICAS: 1, FILTER_GROUPS: 100 });
const PHASES = (process.env.BENCH_FANOUT_PHASES ?? '100:50:8,1000:5:8,1000f:200:20').split(',').map((spec) => {
  const [subs, rate, seconds] = spec.split(':');
  return { subscriptions: parseInt(subs, 10), filtered: subs.endsWith('f'), rate: Number(rate), seconds: Number(seconds) };
});
type PhaseSpec = (typeof PHASES)[number];

interface Result extends DeliveryTally {
  build: string;
  phase: string;
  perSecond: number;
  p50: number;
  p99: number;
  cpuMsPerDelivery: number;
  bareCount: number;
  barePerSecond: number;
}

/** Subscription n posts to /n; the bare client to /bare. Records each (subscription, event) once with its count, and the latency from the write. */
class FanoutReceiver {
  readonly arrivals = new Map<string, number>();
  latencies: number[] = [];
  firstAt = 0;
  lastAt = 0;
  bodyBytes = 0;
  /** Send time of each write's email, set by the phase. */
  sentAt = new Map<string, number>();
  /** Whether subscription n is owed the event of an email, set by the phase. */
  owes: (subscription: number, email: string) => boolean = () => true;
  /** First arrivals of this phase's events that were not owed, and arrivals after the first. */
  wrong = 0;
  twice = 0;
  /** The emails of this phase's events that arrived anywhere. */
  readonly emails = new Set<string>();
  private server?: Server;
  url = '';

  reset(sentAt: Map<string, number>, owes: (subscription: number, email: string) => boolean): void {
    this.arrivals.clear();
    this.latencies = [];
    this.firstAt = this.lastAt = 0;
    this.wrong = this.twice = 0;
    this.emails.clear();
    this.sentAt = sentAt;
    this.owes = owes;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        res.writeHead(204).end();
        if (req.url === '/bare') return;
        const at = performance.now();
        const raw = Buffer.concat(chunks);
        this.bodyBytes = raw.length;
        const event = JSON.parse(raw.toString('utf8')) as { id: string; data: { email?: string } };
        const email = event.data.email ?? '';
        const sent = this.sentAt.get(email);
        // A late delivery of an earlier phase's event is not this phase's.
        if (sent === undefined) return;
        this.emails.add(email);
        const subscription = Number(req.url!.slice(1));
        const key = `${subscription}|${event.id}`;
        const seen = this.arrivals.get(key);
        this.arrivals.set(key, (seen ?? 0) + 1);
        if (seen) {
          this.twice++;
          return;
        }
        if (!this.owes(subscription, email)) {
          this.wrong++;
          return;
        }
        this.firstAt ||= at;
        this.lastAt = at;
        this.latencies.push(at - sent);
      });
    });
    this.server.maxConnections = 10_000;
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((r) => this.server!.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  close(): void {
    this.server?.closeAllConnections();
    this.server?.close();
  }
}

/** `count` bodies of `bytes` bytes, each signed with one of `secrets` by standardwebhooks, POSTed on `connections` keep-alive sockets; answers a second. */
async function bareClient(url: string, count: number, bytes: number, secrets: Webhook[], connections: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const target = new URL(`${url}/bare`);
  const filler = 'x'.repeat(Math.max(0, bytes - 60));
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const id = `msg_${i}`;
      const body = `{"id":"${id}","type":"contact.created","data":{"pad":"${filler}"}}`;
      const at = new Date();
      const headers = {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': secrets[i % secrets.length].sign(id, at, body),
      };
      await new Promise<void>((resolve, reject) => {
        const req = request(target, { method: 'POST', agent, headers }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end(body);
      });
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return Math.round(count / seconds);
}

/** Another webhooks process of the stack: the same program and environment as its first, without a health port. */
function startReplica(stack: BenchStack): ChildProcess {
  const pid = stack.children.webhooks.pid!;
  const [command, ...args] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const env = Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  return spawn(command, args, { env: { ...env, HEALTH_PORT: '0' }, stdio: ['ignore', 'ignore', 'inherit'] });
}

class FanoutStack {
  private readonly receiver = new FanoutReceiver();
  private readonly ids: string[] = [];
  private readonly secrets: Webhook[] = [];
  private readonly replicas: ChildProcess[] = [];
  private filtered = false;
  private readonly headers: Record<string, string>;
  private readonly writeSlots = new Slots(K.WRITE_CONNECTIONS);

  private constructor(
    readonly build: string,
    private readonly stack: BenchStack,
  ) {
    this.headers = { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' };
  }

  static async start(build: string, root: string, replicas: number): Promise<FanoutStack> {
    const maxSubscriptions = String(Math.max(100, ...PHASES.map((p) => p.subscriptions)));
    const stack = await startBenchStack(root, { env: { WEBHOOKS_MAX_SUBSCRIPTIONS: maxSubscriptions } });
    const fanout = new FanoutStack(build, stack);
    await fanout.receiver.start();
    for (let r = 1; r < replicas; r++) fanout.replicas.push(startReplica(stack));
    return fanout;
  }

  private webhooksCpuMs(): number {
    return [this.stack.children.webhooks, ...this.replicas].reduce((sum, child) => sum + cpuMs(child.pid!), 0);
  }

  private async request(method: string, path: string, body: unknown): Promise<any> {
    const res = await fetch(`${this.stack.api}${path}`, { method, headers: this.headers, body: JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: unknown }).data;
  }

  /** Subscriptions up to `count`, each with a secret of its own, with the phase's filters or none. */
  private async prepare(spec: PhaseSpec): Promise<void> {
    while (this.ids.length < spec.subscriptions) {
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      const i = this.ids.length;
      const body = {
        name: `s${i}`,
        url: `${this.receiver.url}/${i}`,
        event_types: ['contact.created'],
        secret,
        filter: this.filtered ? filterOf(i % K.FILTER_GROUPS) : undefined,
      };
      this.ids.push((await this.request('POST', '/webhooks', body)).id);
      this.secrets.push(new Webhook(secret));
    }
    if (spec.filtered !== this.filtered) {
      this.filtered = spec.filtered;
      for (let i = 0; i < this.ids.length; i++)
        await this.request('PATCH', `/webhooks/${this.ids[i]}`, { filter: spec.filtered ? filterOf(i % K.FILTER_GROUPS) : null });
    }
  }

  async phase(spec: PhaseSpec, name: string): Promise<Result> {
    await this.prepare(spec);
    const subscriptions = spec.subscriptions;
    const sentAt = new Map<string, number>();
    // Owed: every write to every subscription, or, filtered, to the subscriptions of its email's group.
    const owes = (subscription: number, email: string) =>
      subscription < subscriptions && (!spec.filtered || email.startsWith(`g${subscription % K.FILTER_GROUPS}-`));
    this.receiver.reset(sentAt, owes);
    const release = await holdLock(process.env.BENCH_LOCK);
    const cpuBefore = this.webhooksCpuMs();
    const ok = new Set<string>();
    let failedWrites = 0;
    const writes: Promise<unknown>[] = [];
    const started = performance.now();
    for (let i = 0; i < spec.rate * spec.seconds; i++) {
      const due = started + (i * 1000) / spec.rate;
      if (due > performance.now()) await new Promise((r) => setTimeout(r, due - performance.now()));
      const prefix = spec.filtered && i % 10 === 0 ? `g${Math.floor(Math.random() * K.FILTER_GROUPS)}` : 'other';
      const email = `${prefix}-${alphanumeric(10).toLowerCase()}@bench.example`;
      sentAt.set(email, performance.now());
      writes.push(
        this.writeSlots.run(() =>
          fetch(`${this.stack.api}/contacts`, { method: 'POST', headers: this.headers, body: JSON.stringify({ email }) })
            .then(async (r) => {
              await r.arrayBuffer();
              if (r.status === 201) ok.add(email);
              else failedWrites++;
            })
            .catch(() => failedWrites++),
        ),
      );
    }
    await Promise.all(writes);
    const groupSize = (group: number) => Math.floor(subscriptions / K.FILTER_GROUPS) + (group < subscriptions % K.FILTER_GROUPS ? 1 : 0);
    const owedOf = (email: string) => {
      if (!spec.filtered) return subscriptions;
      const group = /^g(\d+)-/.exec(email)?.[1];
      return group === undefined ? 0 : groupSize(Number(group));
    };
    // A write answered with an error may have committed all the same: its deliveries then count, as owed.
    const expected = () => [...sentAt.keys()].filter((e) => ok.has(e) || arrivedEmails.has(e)).reduce((sum, email) => sum + owedOf(email), 0);
    const arrivedEmails = this.receiver.emails;
    const deadline = performance.now() + K.DRAIN_S * 1000;
    let lastCount = -1;
    let lastChange = performance.now();
    for (;;) {
      const count = this.receiver.latencies.length;
      if (count !== lastCount) [lastCount, lastChange] = [count, performance.now()];
      if (count >= expected() || performance.now() > deadline || performance.now() - lastChange > 60_000) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // A last look for late extra or duplicate deliveries once the owed ones are in.
    await new Promise((r) => setTimeout(r, 2000));
    const cpu = this.webhooksCpuMs() - cpuBefore;
    release();
    const delivered = this.receiver.latencies.length;
    const span = (this.receiver.lastAt - this.receiver.firstAt) / 1000;
    const bareCount = Math.min(delivered, 40_000);
    const barePerSecond = bareCount
      ? await bareClient(this.receiver.url, bareCount, this.receiver.bodyBytes || 400, this.secrets.slice(0, subscriptions), K.BARE_CONNECTIONS)
      : 0;
    return {
      build: this.build,
      phase: name,
      writes: sentAt.size,
      failedWrites,
      expected: expected(),
      delivered,
      missing: Math.max(0, expected() - delivered),
      unexpected: this.receiver.wrong,
      duplicates: this.receiver.twice,
      perSecond: span > 0 ? Math.round(delivered / span) : 0,
      p50: Math.round(percentile(this.receiver.latencies, 50) ?? 0),
      p99: Math.round(percentile(this.receiver.latencies, 99) ?? 0),
      cpuMsPerDelivery: Number((cpu / Math.max(1, delivered)).toFixed(3)),
      bareCount,
      barePerSecond,
    };
  }

  async stop(): Promise<void> {
    this.receiver.close();
    for (const replica of this.replicas) replica.kill('SIGTERM');
    await this.stack.stop();
  }
}

const header =
  '| Build | Phase | writes | failed writes | owed | delivered | missing | not matching | twice | deliveries/s | bare client /s | ratio | write→delivery p50 ms | p99 ms | webhooks CPU ms/delivery |';
const row = (r: Result) =>
  `| ${r.build} | ${r.phase} | ${r.writes} | ${r.failedWrites} | ${r.expected} | ${r.delivered} | ${r.missing} | ${r.unexpected} | ${r.duplicates} | ${r.perSecond} | ` +
  `${r.barePerSecond} | ${r.barePerSecond ? (r.perSecond / r.barePerSecond).toFixed(2) : '–'} | ${r.p50} | ${r.p99} | ${r.cpuMsPerDelivery} |`;

async function main(): Promise<void> {
  const refs = process.argv.slice(2);
  // `<label>=<dir>` names a checkout built already; a plain ref is built here; `@<n>` after either runs n webhooks processes.
  const built = refs.map((arg) => {
    const [ref, replicas] = arg.split('@');
    const [label, dir] = ref.split('=');
    const replicasOf = Number(replicas ?? K.WEBHOOKS_REPLICAS);
    return { replicas: replicasOf, ...(dir ? { commit: label, dir, remove: () => undefined } : buildRef(ref)) };
  });
  const stacks: FanoutStack[] = [];
  const results: Result[] = [];
  const loads: string[] = [];
  try {
    for (const b of built) stacks.push(await FanoutStack.start(b.replicas > 1 ? `${b.commit} ×${b.replicas}` : b.commit, b.dir, b.replicas));
    if (process.env.BENCH_FANOUT_THIS !== '0') stacks.push(await FanoutStack.start(thisBuild(), ROOT, K.WEBHOOKS_REPLICAS));
    for (const spec of PHASES) {
      const name = `${spec.subscriptions} subs${spec.filtered ? ', filtered' : ''}, ${spec.rate} writes/s for ${spec.seconds} s`;
      for (const stack of stacks) {
        loads.push(
          loadavg()
            .map((l) => l.toFixed(1))
            .join(' '),
        );
        const result = await stack.phase(spec, name);
        process.stderr.write(`${row(result)}\n`);
        results.push(result);
      }
    }
  } finally {
    for (const stack of stacks) await stack.stop().catch(() => undefined);
    for (const b of built) b.remove();
  }
  const lines = [
    `Run ${new Date().toISOString()} on ${machine()}; load average (1/5/15 min) before each phase: ${loads.join('; ')}.`,
    '',
    header,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(row),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBenchmark(main);
