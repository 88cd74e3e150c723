import { ScreenPass } from './event-screen';

/**
 * Runs the shared screening passes (EventScreen.screenWaiting) one at a time, beside the dispatcher's claims
 * rather than in front of them: a claim never waits for a pass, however long the backlog a pass works on, and
 * a pass that marked an event to send asks for a claim. While a pass leaves work the next one follows, and a
 * pass asked for while one runs follows it, so the work a pass leaves is never waiting for a wake-up.
 */
export class ScreenLoop {
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly pass: () => Promise<ScreenPass>,
    /** A pass marked an event to send: a claim has work. */
    private readonly onKept: () => void,
    private readonly onError: (err: Error) => void,
  ) {}

  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass()
      .then(
        ({ kept, more }) => {
          if (more) this.again = true;
          if (kept) this.onKept();
        },
        (err: Error) => this.onError(err),
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** No pass starts after this; resolves once the one under way (bounded by its budget) has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}
