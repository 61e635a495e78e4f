/** Time as a port, so decisions can be tested with a fake clock. */
export interface Clock {
  /** Wall-clock milliseconds since the epoch. Never throws. */
  now(): number;
  /** Resolves after `ms` milliseconds, or early (without error) when `signal` aborts. Never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
/** Inversify token of the Clock port. */
export const Clock = Symbol.for('warden.Clock');
