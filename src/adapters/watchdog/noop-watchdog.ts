import type { Watchdog } from '../../ports/watchdog.js';

/** The watchdog of mode `off`: every call succeeds and nothing is ever armed. */
export class NoopWatchdog implements Watchdog {
  readonly isActive = false;

  async activate(_timeoutSeconds: number): Promise<boolean> {
    return true;
  }

  async keepalive(): Promise<boolean> {
    return true;
  }

  async disable(): Promise<void> {}

  async isUsable(): Promise<boolean> {
    return true;
  }
}
