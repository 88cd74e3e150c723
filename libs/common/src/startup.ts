import { ConfigError } from './config';

/** A dependency is missing or unreachable at start-up. */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/**
 * Runs a process's start function; a configuration or dependency failure ends the process with one
 * clear line instead of a stack trace.
 */
export function runMain(service: string, start: () => Promise<unknown>): void {
  start().catch((err: unknown) => {
    if (err instanceof ConfigError || err instanceof StartupError) {
      process.stderr.write(`${service}: cannot start: ${err.message}\n`);
    } else {
      process.stderr.write(`${service}: cannot start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    process.exit(1);
  });
}

/** Closes the process cleanly on SIGTERM (Kubernetes) and SIGINT (Ctrl-C). */
export function onShutdownSignal(close: () => Promise<void>): void {
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    close()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        process.stderr.write(`shutdown after ${signal} failed: ${String(err)}\n`);
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

/** `node main.js migrate` asks a process to apply its migrations and exit instead of serving. */
export function isMigrateCommand(argv: readonly string[] = process.argv): boolean {
  return argv[2] === 'migrate';
}

/** Runs a process's migrate command and reports what it applied; a failure exits non-zero, as runMain does. */
export function runMigrate(service: string, migrate: () => Promise<string[]>): void {
  runMain(`${service} migrate`, async () => {
    const applied = await migrate();
    process.stdout.write(`${service}: ${applied.length ? `applied ${applied.length} migration(s): ${applied.join(', ')}` : 'schema is current'}\n`);
  });
}
