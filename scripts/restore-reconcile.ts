import { runMain } from '@crm/common';
import { markRestored } from '@crm/messaging';

// `npm run restore-reconcile`: run once after restoring the database, before the processes start again
// (docs/operations.md, "Restore"). DATABASE_URL names the restored database.
runMain('restore-reconcile', async () => {
  for (const line of await markRestored(process.env)) process.stdout.write(`marked ${line} as restored\n`);
  process.stdout.write('start the processes: the event log and the webhook intake reconcile with the stream at their start\n');
});
