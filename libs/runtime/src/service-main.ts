import { isMigrateCommand, onShutdownSignal, runMain, runMigrate, startIdleHeapTrim, startTracing } from '@crm/common';
import { migrateService, ServiceDefinition, startService } from './service-app';

/**
 * The main() of a NATS service: `node main.js` serves until SIGTERM; `node main.js migrate` applies the
 * service's migrations and exits (the Kubernetes migration Job). The definition is built inside, so a
 * configuration error it raises ends the process with one line, as any other start-up error does.
 */
export function runServiceMain(name: string, define: () => ServiceDefinition): void {
  if (isMigrateCommand()) {
    runMigrate(name, () => migrateService(define()));
    return;
  }
  runMain(name, async () => {
    // Before anything else, so every span of start-up and after is exported (when an OTLP endpoint is set).
    const stopTracing = await startTracing(name, process.env);
    const service = await startService(define(), process.env);
    // Whatever the log level, as the gateway does: with HEALTH_PORT=0 this is how a supervisor learns the port.
    process.stdout.write(`CRM ${name} health on ${service.healthUrl}\n`);
    const stopTrim = startIdleHeapTrim((err) => service.logger.warn({ err }, 'idle heap trim failed'));
    onShutdownSignal(async () => {
      stopTrim();
      await service.close();
      await stopTracing?.();
    });
  });
}
