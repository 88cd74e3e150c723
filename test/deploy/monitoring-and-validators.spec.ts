import { spawnSync } from 'child_process';
import { readdirSync, readFileSync } from 'fs';
import { join } from 'path';
import { parse, parseAllDocuments } from 'yaml';

/**
 * The optional monitoring component and the checks the real tools make (kubectl kustomize, Debian's
 * docker-compose) of what manifests.spec.ts reads: a file they reject fails here.
 */

const ROOT = join(__dirname, '..', '..');
const PROCESSES = ['gateway', 'contacts', 'deals', 'events', 'webhooks'] as const;

type K8sObject = { kind: string; metadata: { name: string }; [key: string]: any };

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

describe('k8s/monitoring (optional component)', () => {
  const dir = join(ROOT, 'k8s', 'monitoring');
  const load = (file: string) => parse(readFileSync(join(dir, file), 'utf8'));
  const component = load('kustomization.yaml') as { kind: string; resources: string[] };
  const base = yamlFiles(join(ROOT, 'k8s'))
    .filter((f) => !f.includes('/monitoring/') && !f.endsWith('kustomization.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS() as K8sObject))
    .filter((o) => o?.kind === 'Deployment');

  it('is a kustomize Component listing its manifests, used by the example overlay', () => {
    expect(component.kind).toBe('Component');
    expect([...component.resources].sort()).toEqual(
      readdirSync(dir)
        .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
        .sort(),
    );
    const overlay = parse(readFileSync(join(ROOT, 'deploy', 'with-monitoring', 'kustomization.yaml'), 'utf8')) as { resources: string[]; components: string[] };
    expect(overlay).toMatchObject({ resources: ['../../k8s'], components: ['../../k8s/monitoring'] });
  });

  it('scrapes /metrics on a named port every Deployment has, from pods the base labels', () => {
    const monitor = load('pod-monitor.yaml') as K8sObject;
    expect(monitor.kind).toBe('PodMonitor');
    const ports = new Set(
      base.flatMap((d) => d.spec.template.spec.containers.flatMap((c: { ports?: Array<{ name: string }> }) => (c.ports ?? []).map((p) => p.name))),
    );
    for (const endpoint of monitor.spec.podMetricsEndpoints) {
      expect(endpoint.path).toBe('/metrics');
      expect(ports.has(endpoint.port)).toBe(true);
    }
    for (const d of base) {
      const exposed = d.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name);
      expect({ deployment: d.metadata.name, scraped: monitor.spec.podMetricsEndpoints.some((e: { port: string }) => exposed.includes(e.port)) }).toEqual({
        deployment: d.metadata.name,
        scraped: true,
      });
    }
    expect(monitor.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/part-of': 'crm' });
  });

  it('has alert rules with an expression, a duration, a severity and a summary', () => {
    const rules = load('prometheus-rules.yaml') as K8sObject;
    expect(rules.kind).toBe('PrometheusRule');
    const all = rules.spec.groups.flatMap((g: { rules: unknown[] }) => g.rules) as Array<Record<string, any>>;
    expect(all.length).toBeGreaterThan(5);
    for (const rule of all) {
      expect({ alert: rule.alert, expr: typeof rule.expr, for: rule.for, severity: rule.labels?.severity, summary: typeof rule.annotations?.summary }).toEqual({
        alert: expect.stringMatching(/^Crm[A-Za-z]+$/),
        expr: 'string',
        for: expect.stringMatching(/^\d+[smh]$/),
        severity: expect.stringMatching(/^(page|ticket)$/),
        summary: 'string',
      });
    }
  });
});

const NATS_PASSWORDS = Object.fromEntries(PROCESSES.map((p) => [`CRM_NATS_${p.toUpperCase()}_PASSWORD`, 'x']));
const REQUIRED = { WEBHOOKS_SECRET_KEYS: 'k1:AAAA', CURSOR_SECRET: 'c'.repeat(44), ...NATS_PASSWORDS };

// The real tools, not just our reading of the files: a manifest or compose file they reject fails here.
// They must be installed (see README); a missing tool fails the test rather than skipping it.
describe('validated by the real tools', () => {
  const run = (command: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...env } });

  it.each(['k8s', 'deploy/cluster', 'deploy/with-ingress', 'deploy/with-monitoring'])('kubectl kustomize renders %s', (dir) => {
    const rendered = run('kubectl', ['kustomize', dir]);
    expect({ dir, error: rendered.error?.message, status: rendered.status, stderr: rendered.stderr }).toEqual({ dir, error: undefined, status: 0, stderr: '' });
    const kinds = parseAllDocuments(rendered.stdout).map((doc) => (doc.toJS() as K8sObject).kind);
    expect(kinds).toEqual(expect.arrayContaining(['Namespace', 'ConfigMap', 'Secret', 'Deployment', 'Service']));
  });

  it('docker-compose (the 1.29 of Debian, so no Compose v2-only keys) accepts docker-compose.yml', () => {
    const checked = run('docker-compose', ['-f', 'docker-compose.yml', 'config', '-q'], REQUIRED);
    expect({ error: checked.error?.message, status: checked.status, stderr: checked.stderr.trim() }).toEqual({ error: undefined, status: 0, stderr: '' });
  });

  it('docker-compose refuses to start without the cursor secret, naming it', () => {
    const checked = run('docker-compose', ['-f', 'docker-compose.yml', 'config', '-q'], { ...REQUIRED, CURSOR_SECRET: '' });
    expect(checked.status).not.toBe(0);
    expect(checked.stderr).toContain('CURSOR_SECRET');
  });

  it('docker-compose refuses to start without a NATS password, naming it', () => {
    const checked = run('docker-compose', ['-f', 'docker-compose.yml', 'config', '-q'], { ...REQUIRED, CRM_NATS_DEALS_PASSWORD: '' });
    expect(checked.status).not.toBe(0);
    expect(checked.stderr).toContain('CRM_NATS_DEALS_PASSWORD');
  });

  it('docker-compose refuses to start without the webhook secret key, naming it', () => {
    const checked = run('docker-compose', ['-f', 'docker-compose.yml', 'config', '-q'], { ...REQUIRED, WEBHOOKS_SECRET_KEYS: '' });
    expect(checked.status).not.toBe(0);
    expect(checked.stderr).toContain('WEBHOOKS_SECRET_KEYS');
  });
});
