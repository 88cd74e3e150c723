import { Injectable } from '@nestjs/common';

/** Wakes this replica's dispatcher early (new events, a subscription resumed or replayed). */
@Injectable()
export class DispatchSignal {
  private listener?: () => void;

  onKick(listener: () => void): void {
    this.listener = listener;
  }

  kick(): void {
    this.listener?.();
  }
}
