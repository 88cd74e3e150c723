import { join } from 'path';
import { machine, percentile, runBenchmark } from './bench-stack';
import { companyId as company, CONTACTS, contactId as contact, DEALS, dealId as deal, userId as user, withSeededStack } from './seed-1m';

/**
 * Every list endpoint and filter at scale, on the data set of seed-1m.ts (1,000,000 contacts, 200,000
 * deals and their neighbours): times each list request through the gateway, one at a time. Common filter
 * values and rare ones both: a keyset page ordered by id with a filter few rows match is the case an index
 * has to serve. `npm run bench:lists`. Settings: BENCH_CONTACTS, BENCH_DEALS, BENCH_LIST_SAMPLES.
 */
const ROOT = join(__dirname, '..', '..');
const SAMPLES = Number(process.env.BENCH_LIST_SAMPLES ?? 100);

async function main(): Promise<void> {
  await withSeededStack(ROOT, async ({ stack, pipelines: { a, b }, seedSeconds }) => {
    const { api, key } = stack;
    const headers = { 'X-Api-Key': key, 'Content-Type': 'application/json' };
    const daysAgo = (d: number) => new Date(Date.now() - d * 86_400_000).toISOString();
    // A cursor deep in the list: the page after the contact in the middle.
    const deepCursor = async (path: string) => {
      let cursor: string | undefined;
      for (let i = 0; i < 3; i++) {
        const page = (await (
          await fetch(`${api}${path}${path.includes('?') ? '&' : '?'}limit=200${cursor ? `&cursor=${cursor}` : ''}`, { headers })
        ).json()) as { next_cursor: string };
        cursor = page.next_cursor;
      }
      return cursor!;
    };
    const scenarios: Array<[string, string]> = [
      ['contacts, first page', '/contacts'],
      ['contacts, fourth page of 200', `/contacts?cursor=${await deepCursor('/contacts')}`],
      ['contacts, stage (a third match)', '/contacts?stage=customer'],
      ['contacts, stage (10 match)', '/contacts?stage=churned'],
      ['contacts, source (a sixth match)', '/contacts?source=referral'],
      ['contacts, source (10 match)', '/contacts?source=social'],
      ['contacts, company_id', `/contacts?company_id=${company(301)}`],
      ['contacts, owner_id (one in ten)', `/contacts?owner_id=${user(7)}`],
      ['contacts, owner_id (5 match)', `/contacts?owner_id=${user(50)}`],
      ['contacts, icp_score_min=90', '/contacts?icp_score_min=90'],
      ['contacts, icp_score_min=100 (10 match)', '/contacts?icp_score_min=100'],
      ['contacts, icp_score_max=5', '/contacts?icp_score_max=5'],
      ['contacts, icp_scored_after (last 30 days)', `/contacts?icp_scored_after=${daysAgo(30)}`],
      ['contacts, icp_scored_before (first 30 days)', `/contacts?icp_scored_before=${daysAgo(700)}`],
      ['contacts, created_after (last day)', `/contacts?created_after=${daysAgo(1)}`],
      ['contacts, created_before (first day)', `/contacts?created_before=${daysAgo(729)}`],
      ['contacts, created in one week a year ago', `/contacts?created_after=${daysAgo(365)}&created_before=${daysAgo(358)}`],
      ['contacts, stage + source', '/contacts?stage=lead&source=email'],
      ['contacts, search by name', '/contacts?search=grace'],
      ['contacts, search one person by email', `/contacts?search=person${Math.floor(CONTACTS / 2)}@`],
      ['contacts, search one person by last name', `/contacts?search=Turing${Math.floor(CONTACTS / 300) * 100 + 22}`],
      ['contacts, search with no match', '/contacts?search=zqxv'],
      ['contacts, stage + search', '/contacts?stage=prospect&search=hopper'],
      ["a contact's deals", `/contacts/${contact(7)}/deals`],
      ["a contact's activities", `/contacts/${contact(13)}/activities`],
      ["a contact's tasks", `/contacts/${contact(17)}/tasks`],
      ['companies', '/companies'],
      ['companies, search', '/companies?search=globex'],
      ['companies, domain', '/companies?domain=company777.example'],
      ['users', '/users'],
      ['activities', '/activities'],
      ['activities, type', '/activities?type=call'],
      ['activities, status (2 match)', '/activities?status=cancelled'],
      ['activities, deal_id', `/activities?deal_id=${deal(3)}`],
      ['tasks', '/tasks'],
      ['tasks, status (2 match)', '/tasks?status=cancelled'],
      ['tasks, owner_id + priority', `/tasks?owner_id=${user(3)}&priority=high`],
      ['deals, first page', '/deals'],
      ['deals, fourth page of 200', `/deals?cursor=${await deepCursor('/deals')}`],
      ['deals, status', '/deals?status=won'],
      ['deals, pipeline_id', `/deals?pipeline_id=${a.id}`],
      ['deals, stage_id', `/deals?stage_id=${b.stages[1].id}`],
      ['deals, contact_id', `/deals?contact_id=${contact(7)}`],
      ['deals, company_id', `/deals?company_id=${company(5)}`],
      ['deals, owner_id', `/deals?owner_id=${user(5)}`],
      ['deals, min_value (most match)', '/deals?min_value=1000'],
      ['deals, min_value (2 match)', '/deals?min_value=500000000000'],
      ['deals, max_value (few match)', '/deals?max_value=10000'],
      ['deals, days_since_activity_gt=365', '/deals?days_since_activity_gt=365'],
      ['deals, created_after (last day)', `/deals?created_after=${daysAgo(1)}`],
      ['deals, status + pipeline + value', `/deals?status=open&pipeline_id=${b.id}&min_value=50000000`],
      ["a pipeline's deals, stage", `/pipelines/${a.id}/deals?stage_id=${a.stages[2].id}`],
      ['pipelines', '/pipelines'],
      ["a deal's history", `/deals/${deal(8)}/history`],
      ["a deal's activities", `/deals/${deal(3)}/activities`],
      ["a deal's tasks", `/deals/${deal(6)}/tasks`],
    ];
    const rows: string[] = [];
    for (const [label, path] of scenarios) {
      const times: number[] = [];
      let count = 0;
      for (let i = 0; i < SAMPLES; i++) {
        const started = performance.now();
        const res = await fetch(`${api}${path}`, { headers });
        const body = (await res.json()) as { data: unknown[] };
        times.push(performance.now() - started);
        if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(body)}`);
        count = body.data.length;
      }
      const p99 = percentile(times, 99);
      rows.push(
        `| ${label} | \`${path.replace(/cursor=[^&]+/, 'cursor=…')}\` | ${count} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 95).toFixed(1)} | ${p99.toFixed(1)}${p99 >= 50 ? ' ⚠' : ''} |`,
      );
    }
    process.stdout.write(
      [
        `Run ${new Date().toISOString()} on ${machine()}; ${CONTACTS} contacts, ${DEALS} deals, 100000 activities and tasks seeded in ${seedSeconds} s; ${SAMPLES} sequential requests each through the gateway.`,
        '',
        '| List | request | items | p50 ms | p95 ms | p99 ms |',
        '|---|---|---:|---:|---:|---:|',
        ...rows,
        '',
      ].join('\n'),
    );
  });
}

runBenchmark(main);
