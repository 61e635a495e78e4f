import type { Clock } from '../../ports/clock.js';
import type { Watchdog } from '../../ports/watchdog.js';

/** Options of a fake watchdog. */
export interface FakeWatchdogOptions {
  /** The device exists and accepts a timeout (default true). */
  readonly usable?: boolean;
  /** With a clock, `hasFired` tells whether the countdown ran out (the machine would have reset). */
  readonly clock?: Clock;
}

/** A watchdog for tests and the simulation: usable or not, kicks that fail on demand, a count of kicks. */
export class FakeWatchdog implements Watchdog {
  private usable: boolean;
  private failing = false;
  private active = false;
  private lastKick: number | null = null;
  private fired = false;
  private readonly clock: Clock | undefined;
  /** Timeout given to the last activate(); null before. */
  timeoutSeconds: number | null = null;
  /** Successful keepalives since construction. */
  keepalives = 0;
  /** activate() calls that armed the device. */
  activations = 0;

  constructor(opts: FakeWatchdogOptions = {}) {
    this.usable = opts.usable ?? true;
    this.clock = opts.clock;
  }

  /** Makes the device (un)usable: activate() and isUsable() follow. */
  setUsable(usable: boolean): void {
    this.usable = usable;
  }

  /** Makes keepalives fail (true) or succeed again. */
  setFailing(failing: boolean): void {
    this.failing = failing;
  }

  get isActive(): boolean {
    this.checkFired();
    return this.active;
  }

  /** The countdown ran out while armed: a real watchdog would have reset the machine. Needs a clock. */
  get hasFired(): boolean {
    this.checkFired();
    return this.fired;
  }

  async activate(timeoutSeconds: number): Promise<boolean> {
    if (!this.usable) return false;
    this.checkFired();
    this.active = true;
    this.timeoutSeconds = timeoutSeconds;
    this.lastKick = this.clock?.now() ?? null;
    this.activations++;
    return true;
  }

  async keepalive(): Promise<boolean> {
    this.checkFired();
    if (!this.active || this.failing) return false;
    this.lastKick = this.clock?.now() ?? null;
    this.keepalives++;
    return true;
  }

  async disable(): Promise<void> {
    this.checkFired();
    this.active = false;
  }

  async isUsable(): Promise<boolean> {
    return this.usable;
  }

  private checkFired(): void {
    if (!this.active || !this.clock || this.lastKick === null || this.timeoutSeconds === null) return;
    if (this.clock.now() >= this.lastKick + this.timeoutSeconds * 1000) this.fired = true;
  }
}
