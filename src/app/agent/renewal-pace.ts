import { fenceWindowSeconds } from '../../domain/cluster/ha/fence-window.js';
import type { RepeatedFailures } from './repeated-failures.js';

/** Part of the fencer's window (ttl - safety_margin) past which a renewal's answer is called late. */
const LATE_FRACTION = 2 / 3;

const WHAT = 'the leader lock is renewed late';

/**
 * Watches how far apart the leader lock's renewals land. The fencer stops PostgreSQL when no
 * renewal was answered within `ttl - watchdog.safety_margin` of the previous one being sent:
 * a slow link to etcd gets there without any error, so the agent says so, once, when a renewal
 * comes in the last third of that window, and once when they are back in time.
 */
export class RenewalPace {
  private lastSentAt: number | null = null;

  constructor(private readonly failures: RepeatedFailures) {}

  /** The lock was taken with a request sent at `sentAt`: the next renewal is measured from there. */
  acquired(sentAt: number): void {
    this.lastSentAt = sentAt;
  }

  /** A renewal sent at `sentAt` was answered at `answeredAt`. */
  renewed(sentAt: number, answeredAt: number, ttlSeconds: number, safetyMarginSeconds: number): void {
    const previous = this.lastSentAt;
    this.lastSentAt = sentAt;
    if (previous === null) return;
    const windowMs = fenceWindowSeconds(ttlSeconds, safetyMarginSeconds) * 1000;
    const usedMs = answeredAt - previous;
    if (usedMs <= windowMs * LATE_FRACTION) {
      this.failures.succeeded(WHAT, 'the leader lock is renewed in time again');
      return;
    }
    this.failures.failed(
      WHAT,
      `the fencer stops PostgreSQL when a renewal is not answered within ${windowMs / 1000} s (ttl - watchdog.safety_margin) of the previous one: etcd answers slowly; raise ttl or mend the link to etcd`,
      { since_previous_renewal_s: Math.round(usedMs / 100) / 10, renewal_round_trip_s: Math.round((answeredAt - sentAt) / 100) / 10 },
    );
  }
}
