import { runMain } from '@crm/common';
import { deadEventsCommand } from '@crm/messaging';

runMain('dead-events', async () => {
  process.exitCode = await deadEventsCommand(process.argv.slice(2), process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
});
