import { readFileSync } from 'fs';
import { join } from 'path';
import { parse } from 'yaml';
import { eventually } from '../support/api-client';
import { startStack, TestStack } from '../support/stack';
import { Receiver } from '../support/webhooks-receiver';

/** Every process serves Prometheus metrics on its health port, never on the gateway's API port. */
describe('metrics on every process', () => {
  let stack: TestStack;
  let receiver: Receiver;
  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '50' } });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  const scrape = async (name: 'gateway' | 'contacts' | 'deals' | 'events' | 'webhooks') => {
    const url = (name === 'gateway' ? stack.gateway : stack.services[name]!).healthUrl.replace(/\/health$/, '/metrics');
    const res = await fetch(url);
    expect(res.status).toBe(200);
    return res.text();
  };
  const value = (text: string, series: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it('reports request handling, outbox, consumer lag, the log and webhook delivery', async () => {
    expect((await stack.api.post('/webhooks', { name: 'metrics', url: receiver.url, event_types: ['contact.created'] })).status).toBe(201);
    const contact = (await stack.api.post('/contacts', { email: `metrics-${Date.now()}@example.com` })).body.data;
    expect((await stack.api.get('/contacts/cont_00000000000000000000000000')).status).toBe(404);
    await receiver.waitFor(1, 'contact.created');

    for (const name of ['gateway', 'contacts', 'deals', 'events', 'webhooks'] as const) {
      const text = await scrape(name);
      expect({ name, cpu: text.includes('process_cpu_seconds_total') }).toEqual({ name, cpu: true });
      expect({ name, outbox: value(text, 'crm_outbox_pending') }).toEqual({ name, outbox: expect.any(Number) });
      expect({ name, age: value(text, 'crm_outbox_oldest_age_seconds') }).toEqual({ name, age: expect.any(Number) });
    }

    const contacts = await scrape('contacts');
    expect(value(contacts, 'crm_rpc_duration_seconds_count{pattern="contacts.contacts.create",outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(value(contacts, 'crm_rpc_duration_seconds_count{pattern="contacts.contacts.get",outcome="not_found"}')).toBeGreaterThanOrEqual(1);
    expect(contacts).toMatch(/^crm_consumer_lag_events\{consumer="[a-z-]+"\} \d+$/m);
    expect(contacts).toContain('# TYPE crm_dead_events gauge');

    // The log and the intake catch up with the stream: their lag comes back to zero.
    await eventually(async () => (value(await scrape('events'), 'crm_consumer_lag_events{consumer="event-log"}') === 0 ? true : undefined));
    expect(value(await scrape('events'), 'crm_event_log_appended_total')).toBeGreaterThanOrEqual(2);
    await eventually(async () => (value(await scrape('webhooks'), 'crm_consumer_lag_events{consumer="webhook-intake"}') === 0 ? true : undefined));

    const webhooks = await eventually(async () => {
      const text = await scrape('webhooks');
      return (value(text, 'crm_webhook_deliveries_total{outcome="success",status_class="2xx"}') ?? 0) >= 1 ? text : undefined;
    });
    expect(value(webhooks, 'crm_webhook_delivery_duration_seconds_count{outcome="success"}')).toBeGreaterThanOrEqual(1);
    expect(value(webhooks, 'crm_webhook_subscriptions{status="active"}')).toBe(1);
    expect(value(webhooks, 'crm_webhook_retries_pending')).toBe(0);

    // Labels never carry ids or secrets.
    for (const name of ['gateway', 'contacts', 'webhooks'] as const) {
      const text = await scrape(name);
      expect(text).not.toContain(contact.id);
      expect(text).not.toContain(stack.apiKey);
    }
  });

  it('serves every metric the alert rules and the dashboard use', async () => {
    const served = new Set<string>();
    for (const name of ['gateway', 'contacts', 'deals', 'events', 'webhooks'] as const) {
      for (const match of (await scrape(name)).matchAll(/^# TYPE (\S+) /gm)) served.add(match[1]);
    }
    const monitoring = join(__dirname, '..', '..', 'k8s', 'monitoring');
    const rules = parse(readFileSync(join(monitoring, 'prometheus-rules.yaml'), 'utf8')) as { spec: { groups: Array<{ rules: Array<{ expr: string }> }> } };
    const dashboard = JSON.parse(readFileSync(join(monitoring, 'grafana-dashboard.json'), 'utf8')) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    const expressions = [...rules.spec.groups.flatMap((g) => g.rules.map((r) => r.expr)), ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))];
    const used = new Set(expressions.flatMap((e) => [...e.matchAll(/\b((?:crm|process)_[a-z_]+)/g)].map((m) => m[1].replace(/_(bucket|count|sum)$/, ''))));
    expect([...used].filter((metric) => !served.has(metric))).toEqual([]);
    expect(used.size).toBeGreaterThan(10);
  });
});
