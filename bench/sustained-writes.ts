import { alphanumeric, percentile } from './bench-stack';

export interface SustainedResult {
  target_rate: number;
  seconds: number;
  sent: number;
  acknowledged: number;
  errors: number;
  achieved_rate: number;
  write_p50_ms: number;
  write_p99_ms: number;
  delivered: number;
  missing: number;
  webhook_p50_ms: number;
  webhook_p95_ms: number;
  webhook_p99_ms: number;
  webhook_max_ms: number;
}

/**
 * Creates contacts at a fixed rate for a fixed time, open loop: a request is sent when its time comes,
 * whether or not earlier ones have been answered, so a slow system is not spared load the way a closed
 * loop of connections would spare it. Each write is timed from its send to its 201, and to the arrival
 * of its contact.created delivery at the receiver (`arrivals`, filled by the caller's webhook endpoint,
 * keyed by contact id). Waits up to `settleMs` after the load for deliveries still on their way.
 */
export async function sustainedWrites(
  api: string,
  key: string,
  arrivals: Map<string, number>,
  options: { rate: number; seconds: number; settleMs?: number },
): Promise<SustainedResult> {
  const headers = { 'X-Api-Key': key, 'Content-Type': 'application/json' };
  const sentAt = new Map<string, number>();
  const writeMs: number[] = [];
  const inFlight: Promise<void>[] = [];
  let errors = 0;
  const total = Math.round(options.rate * options.seconds);
  const started = performance.now();
  const send = (i: number) => {
    const at = performance.now();
    const email = `sustained${i}-${alphanumeric(6)}@bench.example`;
    return fetch(`${api}/contacts`, { method: 'POST', headers, body: JSON.stringify({ email, first_name: 'Sustained' }) })
      .then(async (res) => {
        const body = (await res.json()) as { data?: { id: string } };
        if (res.status !== 201 || !body.data) throw new Error(`status ${res.status}`);
        writeMs.push(performance.now() - at);
        sentAt.set(body.data.id, at);
      })
      .catch(() => void errors++);
  };
  for (let i = 0; i < total; i++) {
    // Each request leaves at its own moment on the schedule, not after the one before it is answered.
    const due = started + (i * 1000) / options.rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(send(i));
  }
  const sendingMs = performance.now() - started;
  await Promise.all(inFlight);
  const deadline = performance.now() + (options.settleMs ?? 30_000);
  while ([...sentAt.keys()].some((id) => !arrivals.has(id)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const lags = [...sentAt].filter(([id]) => arrivals.has(id)).map(([id, at]) => arrivals.get(id)! - at);
  const round = (n: number) => Math.round(n);
  return {
    target_rate: options.rate,
    seconds: options.seconds,
    sent: total,
    acknowledged: sentAt.size,
    errors,
    achieved_rate: round((total * 1000) / sendingMs),
    write_p50_ms: round(percentile(writeMs, 50)),
    write_p99_ms: round(percentile(writeMs, 99)),
    delivered: lags.length,
    missing: sentAt.size - lags.length,
    webhook_p50_ms: round(percentile(lags, 50)),
    webhook_p95_ms: round(percentile(lags, 95)),
    webhook_p99_ms: round(percentile(lags, 99)),
    webhook_max_ms: round(Math.max(...lags)),
  };
}
