#!/usr/bin/env node
// Writes test/support/test-durations.json, the table the test sequencer orders files by, from the report of
// a whole run: `npx jest --json --outputFile=/tmp/jest.json`, then `node tools/test/durations.js /tmp/jest.json`.
// Files of the report are measured again; files it did not run keep their entry; deleted files are dropped.
const { existsSync, readFileSync, writeFileSync } = require('fs');
const { join, relative } = require('path');

const root = join(__dirname, '..', '..');
const tablePath = join(root, 'test', 'support', 'test-durations.json');
const [report] = process.argv.slice(2);
if (!report) {
  console.error('usage: node tools/test/durations.js <jest --json report>');
  process.exit(2);
}
const { testResults } = JSON.parse(readFileSync(report, 'utf8'));
const table = existsSync(tablePath) ? JSON.parse(readFileSync(tablePath, 'utf8')).seconds : {};
for (const result of testResults) {
  table[relative(root, result.name)] = Math.round((result.endTime - result.startTime) / 100) / 10;
}
const seconds = Object.fromEntries(
  Object.entries(table)
    .filter(([file]) => existsSync(join(root, file)))
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
const note = 'Seconds each test file took in a whole run; written by tools/test/durations.js, read by slowest-first.sequencer.js.';
writeFileSync(tablePath, `${JSON.stringify({ note, seconds }, null, 2)}\n`);
console.log(`${Object.keys(seconds).length} files in ${relative(root, tablePath)}`);
