import { execSync } from 'child_process';
import { Client } from 'pg';
import { machine, ROOT, runBenchmark, withBenchStack } from './bench-stack';

/**
 * `npm run bench:erasure`: erasing one contact with 10,000 history entries and 10,000 events
 * (docs/privacy.md; target under 30 s), from `POST /privacy/erasures` to `completed`, with the time
 * each step of the erasure took (polled every 50 ms, so each is rounded up to that).
 */
const UPDATES = Number(process.env.BENCH_ERASURE_UPDATES ?? 9_999);
/** PATCHes of one row wait for each other: a few writers keep it busy, more only queue (and time out on a loaded machine). */
const WRITERS = 4;

async function main(): Promise<void> {
  await withBenchStack(
    ROOT,
    async (stack) => {
      const headers = { 'X-Api-Key': stack.key, 'Content-Type': 'application/json' };
      const surname = `Erasebench${Date.now().toString(36)}`;
      const contact = await stack.post('/contacts', {
        email: `${surname.toLowerCase()}@bench.example`,
        first_name: 'Ada',
        last_name: surname,
        phone: '+44 20 7946 0000',
      });
      process.stderr.write(`writing ${UPDATES} updates\n`);
      let next = 0;
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          while (next < UPDATES) {
            const i = next++;
            for (;;) {
              const res = await fetch(`${stack.api}/contacts/${contact.id}`, { method: 'PATCH', headers, body: JSON.stringify({ title: `${surname} ${i}` }) });
              if (res.ok) break;
              // A 503 on a loaded machine: the service may have applied it or not; either is one more entry or none, so send it again.
              if (res.status !== 503) throw new Error(`PATCH: ${res.status} ${await res.text()}`);
            }
          }
        }),
      );
      const db = new Client({ connectionString: stack.databaseUrl });
      await db.connect();
      try {
        const logged = async () =>
          Number((await db.query(`SELECT count(*) AS n FROM events.events WHERE type LIKE 'contact.%' AND data->>'contact_id' = $1`, [contact.id])).rows[0].n);
        process.stderr.write('waiting for the event log\n');
        while ((await logged()) < UPDATES + 1) await new Promise((resolve) => setTimeout(resolve, 200));
        const load = execSync('uptime').toString().trim();
        const started = performance.now();
        const asked = await stack.post('/privacy/erasures', { subject: { object: 'contacts', id: contact.id } });
        const steps: Array<{ step: string; at: number }> = [];
        let erasure: any;
        for (;;) {
          erasure = ((await (await fetch(`${stack.api}/privacy/erasures/${asked.id}`, { headers })).json()) as { data: any }).data;
          const step = erasure.status === 'completed' ? 'completed' : (erasure.step ?? erasure.status);
          if (steps[steps.length - 1]?.step !== step) steps.push({ step, at: performance.now() - started });
          if (erasure.status === 'completed' || erasure.status === 'failed') break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        const total = performance.now() - started;
        if (erasure.status === 'failed') throw new Error(`the erasure failed: ${erasure.error}`);
        const took = steps.slice(0, -1).map((s, i) => `${s.step} ${((steps[i + 1].at - s.at) / 1000).toFixed(1)} s`);
        const counts = erasure.receipt.stores
          .filter((s: { deleted: number; redacted: number }) => s.deleted + s.redacted > 0)
          .map((s: { store: string; deleted: number; redacted: number }) => `${s.store} ${s.deleted}/${s.redacted}`);
        const lines = [
          `Run ${new Date().toISOString()} on ${machine()}; load before the erasure: ${load}.`,
          `One contact with ${UPDATES + 1} history entries and ${UPDATES + 1} events: erased in ${(total / 1000).toFixed(1)} s (POST to completed).`,
          `Steps: ${took.join(', ')}.`,
          `Receipt (deleted/redacted): ${counts.join(', ')}.`,
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
      } finally {
        await db.end();
      }
    },
    { env: { CRM_READ_WRITE_ALSO_GRANTS: 'privacy:delete,privacy:read' } },
  );
}

runBenchmark(main);
