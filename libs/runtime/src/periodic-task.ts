export interface PeriodicTaskOptions {
  /** `after-interval`: the first run waits a whole interval (housekeeping nothing needs at start-up). */
  firstRun?: 'now' | 'after-interval';
}

/**
 * Runs `work` now (or after the first interval) and then every `intervalMs`, never two at once: a run
 * still going when the next is due is not doubled. `stop` waits for the run in progress, so shutdown
 * never closes the database under it. A failed run is reported to `failed` and retried at the next
 * interval. The timer alone never keeps a process alive.
 */
export class PeriodicTask {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly work: () => Promise<void>,
    private readonly failed: (err: Error) => void,
    private readonly options: PeriodicTaskOptions = {},
  ) {}

  /** True once stop() was called: long runs check it between their steps. */
  get stopping(): boolean {
    return this.stopped;
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.intervalMs).unref();
    if (this.options.firstRun !== 'after-interval') this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.running || this.stopped) return;
    this.running = this.work()
      .catch((err: Error) => this.failed(err))
      .finally(() => (this.running = undefined));
  }
}
