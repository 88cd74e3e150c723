import { randomBytes } from 'crypto';
import { Client } from 'pg';
import { BenchStack, buildRef, git, machine, ROOT, runBenchmark, startBenchStack } from './bench-stack';

/**
 * How fast one service's outbox relay empties its outbox, this build beside an earlier commit in one run
 * (`npm run bench:relay -- <git ref>`, default HEAD~1). Each stack runs the contacts service and the
 * gateway only, so nothing else reads the stream. A round commits BENCH_RELAY_ROWS synthetic outbox rows
 * in one transaction (with the notification a write sends) and times from the commit until the outbox is
 * empty: every row published to JetStream, acknowledged and deleted. The builds alternate, round by round.
 * Scenarios: `distinct`, every event of its own contact (a sync of new contacts); `pairs`, two events per
 * contact back to back (a create that also links a company); `repeats`, 10 events per contact spread over
 * the outbox (the same records updated over and over); `batched pairs`, the pairs as batch writes commit
 * them, 200 rows to a transaction. All rows of a round are committed at once, so they are marked as the
 * relay knows a transaction's rows: `created_at` is the start of the transaction that wrote a row, the
 * same for all of one transaction's rows (PostgreSQL's now()); the batched scenario gives each block of
 * 200 its own.
 */
const ROWS = Number(process.env.BENCH_RELAY_ROWS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SCENARIOS: Record<string, { contact: (n: string) => string; transaction?: (n: string) => string }> = {
  distinct: { contact: (n) => n },
  pairs: { contact: (n) => `(${n} / 2)` },
  repeats: { contact: (n) => `(${n} % ${Math.max(1, Math.floor(ROWS / 10))})` },
  'batched pairs': { contact: (n) => `(${n} / 2)`, transaction: (n) => `((${n} - 1) / 200)` },
};
const DRAIN_DEADLINE_MS = 600_000;

async function drain(stack: BenchStack, scenario: string): Promise<number> {
  const db = new Client({ connectionString: stack.databaseUrl });
  await db.connect();
  try {
    const tag = randomBytes(4).toString('hex');
    const contact = SCENARIOS[scenario].contact('n');
    const transaction = SCENARIOS[scenario].transaction?.('n') ?? '0';
    await db.query('BEGIN');
    await db.query(
      `INSERT INTO contacts.outbox (event_id, type, payload, created_at)
       SELECT e.id, 'contact.updated', jsonb_build_object('id', e.id, 'type', 'contact.updated', 'occurred_at', now(),
                'actor', jsonb_build_object('type', 'system', 'id', 'bench'), 'via', 'system', 'request_id', NULL,
                'data', jsonb_build_object('contact_id', 'con_bench_${tag}_' || ${contact}, 'changed', jsonb_build_array('first_name'),
                  'previous', jsonb_build_object('first_name', 'A'), 'current', jsonb_build_object('first_name', 'B'))),
              now() + ${transaction} * interval '1 millisecond'
       FROM generate_series(1, $1::int) AS n, LATERAL (SELECT 'evt_bench_${tag}_' || n AS id) AS e
       ORDER BY n`,
      [ROWS],
    );
    await db.query(`SELECT pg_notify('outbox_contacts', '')`);
    await db.query('COMMIT');
    const started = performance.now();
    for (;;) {
      const { rows } = await db.query<{ left: number }>('SELECT count(*)::int AS left FROM contacts.outbox WHERE published_seq IS NULL');
      if (rows[0].left === 0) break;
      if (performance.now() - started > DRAIN_DEADLINE_MS) throw new Error(`the outbox still held ${rows[0].left} rows`);
      await new Promise((r) => setTimeout(r, 10));
    }
    return (performance.now() - started) / 1000;
  } finally {
    await db.end();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const base = buildRef(process.argv[2] ?? 'HEAD~1');
  const current = git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain') ? '+changes' : '');
  const stacks: Record<string, BenchStack> = {};
  const seconds: Record<string, Record<string, number[]>> = {};
  try {
    stacks[`base ${base.commit}`] = await startBenchStack(base.dir, { apps: ['contacts', 'gateway'] });
    stacks[`this ${current}`] = await startBenchStack(ROOT, { apps: ['contacts', 'gateway'] });
    for (const scenario of Object.keys(SCENARIOS)) {
      for (let round = 0; round < ROUNDS; round++) {
        for (const [name, stack] of Object.entries(stacks)) {
          const s = await drain(stack, scenario);
          ((seconds[scenario] ??= {})[name] ??= []).push(s);
          process.stderr.write(`${scenario} round ${round + 1} ${name}: ${ROWS} rows in ${s.toFixed(2)} s (${Math.round(ROWS / s)}/s)\n`);
        }
      }
    }
  } finally {
    await Promise.all(Object.values(stacks).map((s) => s.stop()));
    base.remove();
  }
  const lines = [
    `relay drain, ${ROWS} rows a round, ${ROUNDS} rounds, ${new Date().toISOString()}, ${machine()}`,
    '',
    '| scenario | build | median s | events/s (median) | rounds (events/s) |',
    '|---|---|---|---|---|',
  ];
  for (const [scenario, byBuild] of Object.entries(seconds)) {
    for (const [name, values] of Object.entries(byBuild)) {
      const m = median(values);
      lines.push(`| ${scenario} | ${name} | ${m.toFixed(2)} | ${Math.round(ROWS / m)} | ${values.map((s) => Math.round(ROWS / s)).join(', ')} |`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

runBenchmark(main);
