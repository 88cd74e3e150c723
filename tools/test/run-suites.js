#!/usr/bin/env node
// `npm test`'s test step: the main suite (two Jest workers on the shared PostgreSQL, NATS and Redis) and the
// fault suite (one worker; every fault test runs its own private PostgreSQL, NATS and Redis) side by side.
// The fault tests spend most of their time waiting for a killed process to come back, which leaves a core
// idle; beside the main suite that time is used, and the shared PostgreSQL serves no more connections than
// the main suite's two workers open. Each line is prefixed with its suite; the step fails if either does,
// and both always run to their end, so one run shows every failure.
const { spawn } = require('child_process');
const { join } = require('path');

const ROOT = join(__dirname, '..', '..');
const extra = process.argv.slice(2);
const suites = [
  { name: 'main', args: ['--testPathIgnorePatterns', '/test/faults/', ...extra] },
  { name: 'faults', args: ['test/faults', '--maxWorkers=1', ...extra] },
];

function prefixed(stream, out, prefix) {
  let pending = '';
  stream.on('data', (chunk) => {
    const lines = (pending + chunk.toString()).split('\n');
    pending = lines.pop();
    for (const line of lines) out.write(`${prefix}${line}\n`);
  });
  stream.on('end', () => pending && out.write(`${prefix}${pending}\n`));
}

function run({ name, args }) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [require.resolve('jest/bin/jest'), ...args], { cwd: ROOT, env: process.env });
    prefixed(child.stdout, process.stdout, `[${name}] `);
    prefixed(child.stderr, process.stderr, `[${name}] `);
    child.on('close', (code, signal) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      console.log(`[${name}] finished in ${seconds} s: ${code === 0 ? 'passed' : `failed (${signal ?? `exit ${code}`})`}`);
      resolve(code === 0);
    });
  });
}

Promise.all(suites.map(run)).then((results) => process.exit(results.every(Boolean) ? 0 : 1));
