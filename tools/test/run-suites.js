#!/usr/bin/env node
// `npm test`'s step after the build: three runs side by side. The first runs the main suite with two workers
// on the shared PostgreSQL, NATS and Redis. The second, one worker, runs the fault suite (each fault test
// starts its own private PostgreSQL, NATS and Redis, and mostly waits for a killed process to come back,
// which leaves a core idle), then the quickest files of the main suite, as many as even out the two runs'
// ends by the table of durations (test/support/test-durations.json). Three stacks at most then share the
// PostgreSQL server, and only while the second run is on those small files. The third type-checks and lints
// every project, one at a time, in the time the fault suite leaves free (it needs only the build). Each line
// is prefixed with its run; the step fails if any does, and all always run to their end, so one run shows
// every failure.
const { spawn } = require('child_process');
const { existsSync } = require('fs');
const { join } = require('path');

const ROOT = join(__dirname, '..', '..');
const extra = process.argv.slice(2);
const { seconds } = require('../../test/support/test-durations.json');

/**
 * The main suite's quickest files whose time, added to the faults' on one worker, evens out with the rest of
 * the main suite on two: faults + moved = (main - moved) / 2.
 */
function quickFilesToMove() {
  const files = Object.entries(seconds).filter(([file]) => existsSync(join(ROOT, file)));
  const faults = files.filter(([file]) => file.startsWith('test/faults/')).reduce((sum, [, s]) => sum + s, 0);
  const main = files.filter(([file]) => !file.startsWith('test/faults/')).sort(([, a], [, b]) => a - b);
  const share = (main.reduce((sum, [, s]) => sum + s, 0) - 2 * faults) / 3;
  const moved = [];
  let total = 0;
  for (const [file, s] of main) {
    if (total + s > share) break;
    moved.push(file);
    total += s;
  }
  return moved;
}

const exact = (file) => `^${join(ROOT, file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`;
const moved = quickFilesToMove().map(exact);
const jest = require.resolve('jest/bin/jest');
const nx = require.resolve('nx/bin/nx');
const suites = [
  { name: 'main', args: [jest, ...extra, '--testPathIgnorePatterns', '/test/faults/', ...moved] },
  { name: 'faults+quick', args: [jest, ...extra, '--maxWorkers=1', '/test/faults/', ...moved] },
  { name: 'checks', args: [nx, 'run-many', '-t', 'typecheck', 'lint', '--parallel=1', '--outputStyle=stream'] },
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
    const child = spawn(process.execPath, args, { cwd: ROOT, env: { NX_DAEMON: 'false', ...process.env } });
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
