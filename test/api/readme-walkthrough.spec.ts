import { execFile } from 'child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { freePort } from '../support/processes';
import { startStack, TestStack } from '../support/stack';

/** The README's "Use it" block, exactly as a new user would paste it. */
function walkthrough(): string {
  const readme = readFileSync(join(__dirname, '../../README.md'), 'utf8');
  const match = /<!-- walkthrough -->\n```sh\n([\s\S]*?)```/.exec(readme);
  if (!match) throw new Error('README.md has no walkthrough block');
  return match[1];
}

describe('the README walkthrough', () => {
  let stack: TestStack;
  let home: string;
  beforeAll(async () => {
    stack = await startStack({ env: { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_ALLOW_INSECURE: 'true', WEBHOOKS_DISPATCH_INTERVAL_MS: '100' } });
    // Run where `npm start` would have left the key.
    home = mkdtempSync(join(tmpdir(), 'crm-readme-'));
    mkdirSync(join(home, '.data'));
    writeFileSync(join(home, '.data', 'dev-api-key'), `${stack.apiKey}\n`);
  });
  afterAll(async () => {
    rmSync(home, { recursive: true, force: true });
    await stack?.stop();
  });

  it.each(['bash', 'zsh', 'dash'])('runs as written in %s against the running stack and prints what its comments promise', async (shell) => {
    const receiverPort = await freePort();
    // Asynchronously: the stack answers from this process, so a blocking spawn would wait for ever.
    const run = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const env = { ...process.env, API: stack.api.baseUrl, RECEIVER_PORT: String(receiverPort) };
      execFile(shell, ['-e', '-c', walkthrough()], { cwd: home, env, timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
      );
    });
    expect({ shell, status: run.status, stderr: run.stderr }).toEqual({ shell, status: 0, stderr: '' });
    const [apiKey, dealStatus, hasMore, eventTypes, secret, delivered, errorCode, ...rest] = run.stdout.split('\n');
    expect(apiKey).toMatch(/^crm_live_[0-9A-Za-z]{32,}$/);
    expect(dealStatus).toBe('won');
    expect(hasMore).toMatch(/^(true|false)$/);
    // The deal's own events in the order they were made: the walkthrough asks until its last one is in the log.
    expect(eventTypes).toBe('deal.created deal.contact_added deal.stage_changed deal.won');
    expect(secret).toMatch(/^whsec_/);
    expect(delivered).toBe('contact.created');
    expect(errorCode).toBe('validation_failed');
    expect(rest.join('')).toBe('');
  });
});
