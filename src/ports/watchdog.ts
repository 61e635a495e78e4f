/**
 * A hardware or software watchdog that resets the machine when a primary's agent hangs,
 * so a stuck primary cannot outlive its leader key.
 */
export interface Watchdog {
  /** Opens and arms the device with the given timeout; false when it cannot be used. Within 1 s; never throws. */
  activate(timeoutSeconds: number): Promise<boolean>;
  /** Resets the countdown; false when the kick failed (the device is then unhealthy). Within 1 s; never throws. */
  keepalive(): Promise<boolean>;
  /** Disarms and closes the device (magic close). Within 1 s; never throws. */
  disable(): Promise<void>;
  /** The device is armed right now. */
  readonly isActive: boolean;
  /** The device can be used (exists, opens, accepts the timeout). Within 1 s; never throws. */
  isUsable(): Promise<boolean>;
}
/** Inversify token of the Watchdog port. */
export const Watchdog = Symbol.for('warden.Watchdog');
