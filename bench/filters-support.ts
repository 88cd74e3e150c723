import { spawn } from 'child_process';
import { createServer, Server } from 'http';
import { Client } from 'pg';

/** The benchmark's filter of a group: three conditions, one write in ten carries a random group's email prefix. */
export const filterOf = (group: number) => ({ 'actor.type': 'api_key', via: { $in: ['api', 'batch'] }, 'data.email': { $starts_with: `g${group}-` } });

/** What a delivery phase counts: writes sent and failed, deliveries owed, arrived, missing, not owed, and arriving twice. */
export interface DeliveryTally {
  writes: number;
  failedWrites: number;
  expected: number;
  delivered: number;
  missing: number;
  unexpected: number;
  duplicates: number;
}

/** At most `size` tasks at a time, the rest in arrival order. */
export class Slots {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly size: number) {}
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/**
 * Holds `flock <file>` (the machine-wide lock timed runs share) until the returned function is called, so
 * a script can seed without it and take it for the timed part alone. No file: nothing is held.
 */
export async function holdLock(file: string | undefined): Promise<() => void> {
  if (!file) return () => undefined;
  const child = spawn('flock', [file, '-c', 'echo held; exec cat'], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('held') && resolve());
    child.on('exit', (code) => reject(new Error(`flock ${file} ended with ${code}`)));
  });
  return () => child.stdin.end();
}

export interface Arrival {
  at: number;
  count: number;
}

/**
 * One HTTP endpoint for every subscription: subscription n posts to /n. Records the first arrival of each
 * (subscription, event id) and how many times it came.
 */
export class BenchReceiver {
  readonly arrivals = new Map<string, Arrival>();
  private server?: Server;
  url = '';

  static key(subscription: number, eventId: string): string {
    return `${subscription}|${eventId}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
        const key = BenchReceiver.key(Number((req.url ?? '/').slice(1)), id);
        const seen = this.arrivals.get(key);
        if (seen) seen.count++;
        else this.arrivals.set(key, { at, count: 1 });
        res.writeHead(204).end();
      });
    });
    this.server.maxConnections = 10_000;
    await new Promise<void>((r) => this.server!.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, r));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  close(): void {
    this.server?.close();
  }
}

/**
 * Why expected deliveries did not arrive, from the webhooks service's own tables: each subscription's cursor
 * and retry state, and the attempts recorded for the missing events.
 */
export async function diagnoseMissing(databaseUrl: string, missing: Array<{ subscriptionId: string; eventId: string }>): Promise<string[]> {
  if (!missing.length) return [];
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const subs = [...new Set(missing.map((m) => m.subscriptionId))];
    const events = [...new Set(missing.map((m) => m.eventId))];
    const attempts = await pg.query(
      `SELECT d.status, coalesce(d.error, '') AS error, count(*)::int AS n FROM webhooks.deliveries d
       WHERE d.subscription_id = ANY ($1) AND d.event_id = ANY ($2) GROUP BY 1, 2 ORDER BY 3 DESC LIMIT 10`,
      [subs, events],
    );
    const state = await pg.query(
      `SELECT s.status, (s.bookmark < (SELECT max(position) FROM webhooks.webhook_events)) AS behind, s.retry_count > 0 AS retrying,
              s.lease_token IS NOT NULL AS leased, count(*)::int AS n
       FROM webhooks.subscriptions s WHERE s.id = ANY ($1) GROUP BY 1, 2, 3, 4 ORDER BY 5 DESC`,
      [subs],
    );
    const intake = await pg.query(`SELECT count(*)::int AS n FROM webhooks.webhook_events WHERE id = ANY ($1)`, [events]);
    return [
      `missing: ${missing.length} deliveries to ${subs.length} subscriptions of ${events.length} events; ${intake.rows[0].n} of those events are in webhook_events`,
      `attempts recorded for them: ${JSON.stringify(attempts.rows)}`,
      `their subscriptions: ${JSON.stringify(state.rows)}`,
    ];
  } finally {
    await pg.end();
  }
}

/** Fills the log directly (the writer's own columns), one event in a thousand carrying the rare value. */
export async function seedLog(databaseUrl: string, count: number): Promise<void> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    await pg.query(
      `INSERT INTO events.events (position, id, type, occurred_at, actor, via, request_id, data, recorded_at)
       SELECT 1000000000 + n, 'evt_bench' || lpad(n::text, 17, '0'), 'contact.updated', now(), '{"type":"api_key","id":"key_bench"}', 'api', NULL,
              jsonb_build_object('contact_id', 'cont_' || n, 'changed', jsonb_build_array('stage'), 'previous', '{"stage":"lead"}'::jsonb,
                                 'current', jsonb_build_object('stage', CASE WHEN n % 1000 = 0 THEN 'customer' ELSE 'prospect' END)),
              now()
       FROM generate_series(1, $1::int) AS n`,
      [count],
    );
    await pg.query(`VACUUM ANALYZE events.events`);
  } finally {
    await pg.end();
  }
}

/**
 * The statements a filtered page runs, on one client without the service: a 5,000-event window read in
 * chunks of 500 as the service reads it, in one statement, and the same window with the filter's equalities tested by
 * PostgreSQL (jsonb containment), which sends only the candidates. Median ms of `rounds` windows.
 */
export async function sqlWindows(
  databaseUrl: string,
  window: number,
  rounds: number,
): Promise<{ chunked: number; single: number; contained: number; candidates: number }> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  try {
    const chunked: number[] = [];
    const single: number[] = [];
    const contained: number[] = [];
    let candidates = 0;
    for (let r = 0; r < rounds; r++) {
      const start = 1_000_000_000 + r * window;
      let t = performance.now();
      for (let at = start; at < start + window; at += 500) {
        await pg.query(
          `SELECT position::text AS pos, id, type, occurred_at, actor, via, request_id, data FROM events.events
           WHERE position > $1 AND type = ANY ($3::text[]) ORDER BY position LIMIT $2`,
          [String(at), 500, ['contact.updated']],
        );
      }
      chunked.push(performance.now() - t);
      t = performance.now();
      await pg.query(
        `SELECT position::text AS pos, id, type, occurred_at, actor, via, request_id, data FROM events.events
         WHERE position > $1 AND type = ANY ($3::text[]) ORDER BY position LIMIT $2`,
        [String(start), window, ['contact.updated']],
      );
      single.push(performance.now() - t);
      t = performance.now();
      const res = await pg.query(
        `SELECT w.position::text AS pos, w.id, w.type, w.occurred_at, w.actor, w.via, w.request_id, w.data
         FROM (SELECT * FROM events.events WHERE position > $1 AND type = ANY ($3::text[]) ORDER BY position LIMIT $2) w
         WHERE w.data @> $4::jsonb ORDER BY w.position`,
        [String(start), window, ['contact.updated'], JSON.stringify({ previous: { stage: 'lead' }, current: { stage: 'customer' } })],
      );
      contained.push(performance.now() - t);
      candidates += res.rowCount ?? 0;
    }
    return { chunked: median(chunked), single: median(single), contained: median(contained), candidates: candidates / rounds };
  } finally {
    await pg.end();
  }
}
