import 'reflect-metadata';
import { isMigrateCommand, onShutdownSignal, runMain, runMigrate, startIdleHeapTrim, startTracing } from '@crm/common';
import { migrateGateway, startGateway } from './gateway.app';

// `node main.js migrate` applies this app's migrations and exits (the Kubernetes migration Job).
if (isMigrateCommand()) runMigrate('gateway', () => migrateGateway());
else {
  runMain('gateway', async () => {
    // Before anything else, so every span of start-up and after is exported (when an OTLP endpoint is set).
    const stopTracing = await startTracing('gateway', process.env);
    const gateway = await startGateway();
    process.stdout.write(`CRM API listening on ${gateway.url}\n`);
    // With HEALTH_PORT=0 this is how a supervisor learns the internal port, as the services say theirs.
    process.stdout.write(`CRM gateway health on ${gateway.healthUrl}\n`);
    const stopTrim = startIdleHeapTrim((err) => process.stderr.write(`gateway: idle heap trim failed: ${String(err)}\n`));
    onShutdownSignal(async () => {
      stopTrim();
      await gateway.close();
      await stopTracing?.();
    });
  });
}
