import {
  natsAuthorizationConfig,
  natsPasswordVariable,
  natsUserName,
  natsUserPermissions,
  RPC_CALLEES,
  RPC_SERVICES,
  rpcServiceWildcard,
  ServiceName,
} from '@crm/contracts';
import { readFileSync } from 'fs';
import { join } from 'path';
import { parse, parseAllDocuments } from 'yaml';
import { natsConfigAccepted, natsPassword } from '../support/processes';

/**
 * Every process connects to NATS as its own user, and each user may touch only its own subjects: the
 * deployment files and the server's users (deploy/nats/crm-users.conf) come from libs/contracts/src/nats-users.ts.
 * test/faults/nats-users.spec.ts runs the stack on a server with those users.
 */
const ROOT = join(__dirname, '..', '..');
const PROCESSES = [ServiceName.Gateway, ...RPC_SERVICES] as ServiceName[];
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

describe('NATS users', () => {
  it('deploy/nats/crm-users.conf is what `npm run nats-users` writes for the crm namespace', () => {
    expect(read('deploy/nats/crm-users.conf')).toBe(natsAuthorizationConfig('crm'));
  });

  it.each(PROCESSES)('%s may publish and subscribe to its own subjects only', (process) => {
    const { publish, subscribe } = natsUserPermissions('crm', process);
    for (const subject of [...publish, ...subscribe]) expect(subject).not.toMatch(/^(>|crm\.>|\$JS\.API\.>|\$JS\.>|_INBOX\.\*)$/);
    // It asks only the services it calls, and takes only its own requests.
    for (const service of RPC_SERVICES) {
      expect({ service, asks: publish.includes(rpcServiceWildcard('crm', service)) }).toEqual({ service, asks: RPC_CALLEES[process].includes(service) });
      expect({ service, answers: subscribe.includes(rpcServiceWildcard('crm', service)) }).toEqual({ service, answers: service === process });
    }
    expect(subscribe.filter((s) => s.startsWith('crm.rpc.')).length).toBe(process === ServiceName.Gateway ? 0 : 1);
    // Replies go only to the requests it received (allow_responses), never to inboxes at large.
    expect(publish.filter((s) => s.startsWith('_INBOX'))).toEqual([]);
    // Domain events only through JetStream consumers; only the gateway listens to one event, its own key revocations.
    expect(subscribe.filter((s) => s.startsWith('crm.events.'))).toEqual(process === ServiceName.Gateway ? ['crm.events.api_key.revoked'] : []);
    // Stream management: its own stream only, and no deleting or purging.
    expect(publish.filter((s) => s.startsWith('$JS.API.STREAM.'))).toEqual(['INFO', 'CREATE', 'UPDATE'].map((verb) => `$JS.API.STREAM.${verb}.CRM_EVENTS`));
    expect(publish.filter((s) => /DELETE|PURGE/.test(s) && !s.startsWith('$JS.API.CONSUMER.DELETE.CRM_EVENTS.'))).toEqual([]);
  });

  describe('passwords', () => {
    const withPasswords = (password: (i: number) => string) => Object.fromEntries(PROCESSES.map((p, i) => [natsPasswordVariable('crm', p), password(i)]));

    it('the documented recipe starts the server even when its random part reads as a number or a size', () => {
      const numberLike = ['9e12345678', '1e5abcdef0', '12e34abcd9', '12345', '7e3'];
      expect(
        natsConfigAccepted(
          natsAuthorizationConfig('crm'),
          withPasswords((i) => natsPassword(numberLike[i])),
        ),
      ).toMatchObject({ ok: true });
      // Why the recipe has letters in front: the same random parts alone stop the server.
      for (const bare of numberLike) {
        expect({
          bare,
          ok: natsConfigAccepted(
            natsAuthorizationConfig('crm'),
            withPasswords(() => bare),
          ).ok,
        }).toEqual({ bare, ok: false });
      }
    });

    it.each(['README.md', 'docs/deployment.md', 'docker-compose.yml'])('%s makes each password with the recipe', (file) => {
      const recipes = read(file).match(/CRM_NATS_\$\{p\}_PASSWORD=[^)]*\)/g) ?? [];
      expect(recipes.length).toBeGreaterThan(0);
      for (const recipe of recipes) expect(recipe).toMatch(/_PASSWORD=crm_nats_\$\(openssl rand -hex 24\)/);
    });
  });

  describe('docker-compose.yml', () => {
    const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Record<string, any>> };
    const nats = compose.services.nats;

    it('runs NATS with the users file and their passwords', () => {
      const args = nats.command as string[];
      const config = args[args.indexOf('-c') + 1];
      expect(nats.volumes).toContain(`./deploy/nats/crm-users.conf:${config}:ro`);
      expect(Object.keys(nats.environment).sort()).toEqual(PROCESSES.map((p) => natsPasswordVariable('crm', p)).sort());
    });

    it.each(PROCESSES)('connects %s as its own user, with the password the server has for it, in the namespace of the users file', (process) => {
      const env = compose.services[process].environment as Record<string, string>;
      const variable = natsPasswordVariable('crm', process);
      expect(env.CRM_NAMESPACE).toBe('crm');
      expect(env.NATS_USER).toBe(natsUserName('crm', process));
      expect(env.NATS_PASSWORD).toBe(nats.environment[variable]);
      expect(env.NATS_PASSWORD).toMatch(new RegExp(`^\\$\\{${variable}:\\?`));
    });
  });

  describe('k8s/', () => {
    const objects = ['secret.yaml', ...PROCESSES.map((p) => `${p}.yaml`)].flatMap((f) => parseAllDocuments(read(`k8s/${f}`)).map((d) => d.toJS()));
    const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'crm-nats');

    it('has a placeholder Secret crm-nats with one password per process', () => {
      expect(Object.entries(secret.stringData).sort()).toEqual(PROCESSES.map((p) => [natsPasswordVariable('crm', p), 'REPLACE_ME']).sort());
    });

    it.each(PROCESSES)('gives %s its own user and only its own password', (process) => {
      const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === process);
      const env = deployment.spec.template.spec.containers[0].env as Array<{ name: string; value?: string; valueFrom?: any }>;
      expect(env.find((e) => e.name === 'NATS_USER')?.value).toBe(natsUserName('crm', process));
      expect(env.find((e) => e.name === 'NATS_PASSWORD')?.valueFrom).toEqual({ secretKeyRef: { name: 'crm-nats', key: natsPasswordVariable('crm', process) } });
      const refs = JSON.stringify(deployment).match(/CRM_NATS_[A-Z]+_PASSWORD/g);
      expect(new Set(refs)).toEqual(new Set([natsPasswordVariable('crm', process)]));
      expect(deployment.spec.template.spec.containers[0].envFrom.map((e: any) => e.secretRef?.name)).not.toContain('crm-nats');
    });
  });
});
