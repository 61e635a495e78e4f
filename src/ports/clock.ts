/** Time as a port, so decisions can be tested with a fake clock. */
export interface Clock {
  /** Wall-clock milliseconds since the epoch. Never throws. */
  now(): number;
  /** Resolves after `ms` milliseconds, or early (without error) when `signal` aborts. Never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Resolves on a later turn of the event loop, once the I/O and timers that waited have run:
   * long work yields here so that nothing (a health check) waits behind all of it. Optional: a
   * clock without it (a fake one) goes on at once.
   */
  turn?(): Promise<void>;
}
/** Inversify token of the Clock port. */
export const Clock = Symbol.for('warden.Clock');
