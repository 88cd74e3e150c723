import { API_BODY_LIMITS } from '../../apps/gateway/src/gateway.app';
import { blockedPorts, bodyLimitProblems, internalExposure, K8sObject, nginxBodyLimit, render, renderVariant } from './exposure-checks';

/**
 * The deployment checks of what the manifests expose and allow, on every shipped render and on variants
 * broken the way a careless edit would break them: each check must name the problem in its variant.
 */

/** The largest body the API takes: an import upload, a batch, or any other request. */
const API_BODY_LIMIT = Math.max(...Object.values(API_BODY_LIMITS));
const SHIPPED = ['k8s', 'deploy/cluster', 'deploy/with-ingress', 'deploy/with-monitoring'];

const patch = (kind: string, name: string, operations: Array<Record<string, unknown>>) => ({ target: { kind, name }, patch: JSON.stringify(operations) });
const find = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!;

describe('what the shipped manifests expose and allow', () => {
  it('derives the API body limit from the code: 50 MiB imports, 8 MiB batches, 1 MiB otherwise', () => {
    expect(API_BODY_LIMITS).toEqual({ request: 2 ** 20, batch: 8 * 2 ** 20, upload: 50 * 2 ** 20 });
    expect(API_BODY_LIMIT).toBe(50 * 2 ** 20);
    expect(nginxBodyLimit('51m')).toBe(51 * 1024 * 1024);
    expect(nginxBodyLimit(undefined)).toBe(1024 * 1024);
    expect(nginxBodyLimit('0')).toBe(Infinity);
  });

  it.each(SHIPPED)('%s: no Ingress reaches the health port, no body limit is below the API, no configured port is blocked', (dir) => {
    const objects = render(dir);
    expect({ dir, exposure: internalExposure(objects), body: bodyLimitProblems(objects, API_BODY_LIMIT), blocked: blockedPorts(objects) }).toEqual({
      dir,
      exposure: [],
      body: [],
      blocked: [],
    });
  });

  it('has an Ingress to check, routed to the API port', () => {
    const objects = render('deploy/with-ingress');
    expect(objects.filter((o) => o.kind === 'Ingress')).toHaveLength(1);
    expect(internalExposure(objects)).toEqual([]);
  });

  it('checks what the processes read: the ports of the URLs in crm-config and crm-secrets, and the collector of crm-network', () => {
    const objects = render('k8s');
    const network = find(objects, 'ConfigMap', 'crm-network').data;
    expect(network).toEqual({ POSTGRES_PORT: '5432', NATS_PORT: '4222', REDIS_PORT: '6379', OTLP_PORT: '4318' });
    expect(find(objects, 'ConfigMap', 'crm-config').data.NATS_URL).toMatch(/:4222$/);
    expect(find(objects, 'Secret', 'crm-secrets').stringData.REDIS_URL).toMatch(/:6379$/);
  });
});

describe('the checks fail on a broken variant', () => {
  it('an Ingress that publishes /metrics through a Service port to the health port', () => {
    const objects = renderVariant({
      resources: ['@/deploy/with-ingress'],
      patches: [
        patch('Service', 'gateway', [{ op: 'add', path: '/spec/ports/-', value: { name: 'health', port: 9090, targetPort: 'health' } }]),
        patch('Ingress', 'crm', [
          {
            op: 'add',
            path: '/spec/rules/0/http/paths/0',
            value: { path: '/metrics', pathType: 'Prefix', backend: { service: { name: 'gateway', port: { name: 'health' } } } },
          },
        ]),
      ],
    });
    expect(internalExposure(objects)).toEqual([
      'Ingress crm /metrics: names an internal path',
      'Ingress crm /metrics: reaches gateway port 3005, not its API port 3000: /metrics and /health are served there',
    ]);
  });

  it('an Ingress body limit below the API (8 MiB refuses a 50 MiB import), or none (1 MiB)', () => {
    const limited = renderVariant({
      resources: ['@/deploy/with-ingress'],
      patches: [patch('Ingress', 'crm', [{ op: 'replace', path: '/metadata/annotations/nginx.ingress.kubernetes.io~1proxy-body-size', value: '8m' }])],
    });
    expect(bodyLimitProblems(limited, API_BODY_LIMIT)).toEqual([`Ingress crm: body limit ${8 * 2 ** 20} bytes is below the API's ${API_BODY_LIMIT}`]);
    const unset = renderVariant({
      resources: ['@/deploy/with-ingress'],
      patches: [patch('Ingress', 'crm', [{ op: 'remove', path: '/metadata/annotations/nginx.ingress.kubernetes.io~1proxy-body-size' }])],
    });
    expect(bodyLimitProblems(unset, API_BODY_LIMIT)).toEqual([`Ingress crm: body limit ${2 ** 20} bytes is below the API's ${API_BODY_LIMIT}`]);
  });

  it('Redis on 6380 in REDIS_URL while the policies still open 6379', () => {
    const objects = renderVariant({
      resources: ['@/k8s'],
      patches: [patch('Secret', 'crm-secrets', [{ op: 'replace', path: '/stringData/REDIS_URL', value: 'rediss://:pw@redis.example.internal:6380' }])],
    });
    expect(blockedPorts(objects)).toEqual(['gateway/gateway: REDIS_URL port 6380 is blocked by the NetworkPolicies']);
  });

  it('a policy edited away from the collector port, and tracing on at a collector on another port', () => {
    const edited = renderVariant({
      resources: ['@/k8s'],
      patches: [patch('NetworkPolicy', 'dependencies-egress', [{ op: 'remove', path: '/spec/egress/3' }])],
    });
    expect(blockedPorts(edited).sort()).toEqual(
      ['contacts', 'deals', 'events', 'gateway'].map((p) => `${p}/${p}: crm-network OTLP_PORT port 4318 is blocked by the NetworkPolicies`),
    );
    const tracing = renderVariant({
      resources: ['@/k8s'],
      patches: [patch('ConfigMap', 'crm-config', [{ op: 'add', path: '/data/OTEL_EXPORTER_OTLP_ENDPOINT', value: 'http://otel-collector.monitoring:4317' }])],
    });
    expect(blockedPorts(tracing).sort()).toEqual(
      [
        'crm-migrate/gateway',
        'crm-migrate/contacts',
        'crm-migrate/deals',
        'crm-migrate/events',
        'crm-migrate/webhooks',
        'gateway/gateway',
        'contacts/contacts',
        'deals/deals',
        'events/events',
      ]
        .map((w) => `${w}: OTEL_EXPORTER_OTLP_ENDPOINT port 4317 is blocked by the NetworkPolicies`)
        .sort(),
    );
  });

  it('passes again when the port is changed where the policies read it: crm-network, through a component before k8s/network-ports', () => {
    const objects = renderVariant(
      {
        resources: ['@/k8s'],
        components: ['redis-port', '@/k8s/network-ports'],
        patches: [patch('Secret', 'crm-secrets', [{ op: 'replace', path: '/stringData/REDIS_URL', value: 'rediss://:pw@redis.example.internal:6380' }])],
      },
      {
        'redis-port/kustomization.yaml': {
          apiVersion: 'kustomize.config.k8s.io/v1alpha1',
          kind: 'Component',
          patches: [patch('ConfigMap', 'crm-network', [{ op: 'replace', path: '/data/REDIS_PORT', value: '6380' }])],
        },
      },
    );
    expect(blockedPorts(objects)).toEqual([]);
    expect(find(objects, 'NetworkPolicy', 'gateway-redis-egress').spec.egress[0].ports).toEqual([{ port: 6380, protocol: 'TCP' }]);
  });
});
