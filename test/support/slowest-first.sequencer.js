// Jest loads this file as is (not through the TypeScript transform), so it is plain CommonJS.
const { relative } = require('path');
const Sequencer = require('@jest/test-sequencer').default;
const durations = require('./test-durations.json');

/**
 * Starts the files that take longest first, from the table a whole run wrote (test-durations.json, see
 * tools/test/durations.js), so the run does not end with one long file on one worker while the other idles.
 * A fresh clone has no Jest cache to order by; the table is committed. A file the table does not know yet
 * counts as the table's median.
 */
class SlowestFirst extends Sequencer {
  sort(tests) {
    const known = Object.values(durations.seconds).sort((a, b) => a - b);
    const median = known.length ? known[Math.floor(known.length / 2)] : 0;
    const seconds = (test) => durations.seconds[relative(test.context.config.rootDir, test.path)] ?? median;
    return [...tests].sort((a, b) => seconds(b) - seconds(a) || (a.path < b.path ? -1 : 1));
  }
}

module.exports = SlowestFirst;
