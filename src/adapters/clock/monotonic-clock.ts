import { performance } from 'node:perf_hooks';
import { SystemClock } from './system-clock.js';

/** A clock that never jumps: epoch-like milliseconds that only move forward (wall-clock changes do not move it). */
export class MonotonicClock extends SystemClock {
  private readonly origin = Date.now() - performance.now();

  override now(): number {
    return this.origin + performance.now();
  }
}
