import { nextLoggedRepeat, repeatLogged } from '../../domain/cluster/rules/repeat-log.js';
import type { Clock } from '../../ports/clock.js';
import type { LogFields, Logger } from '../../ports/logger.js';

/** One failure that keeps happening: how often in a row, why last, since when. */
interface Streak {
  readonly count: number;
  readonly reason: string;
  readonly since: number;
}

/**
 * Failures that repeat at the loop's pace (the DCS unreachable, a key that cannot be written):
 * each says why once, is reminded rarely (`repeatLogged`), and says once when it ends, so an
 * outage of an hour leaves a handful of lines rather than one per loop.
 */
export class RepeatedFailures {
  private readonly streaks = new Map<string, Streak>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /** `what` failed once more, because of `reason`. */
  failed(what: string, reason: string, fields: LogFields = {}): void {
    const prev = this.streaks.get(what);
    const now = this.clock.now();
    const count = (prev?.count ?? 0) + 1;
    this.streaks.set(what, { count, reason, since: prev?.since ?? now });
    if (!repeatLogged(count, prev !== undefined && prev.reason !== reason)) {
      this.logger.debug(what, { ...fields, error: reason, times: count });
      return;
    }
    const streak = count === 1 ? '' : ` (${count} times in a row over ${seconds(now - prev!.since)} s)`;
    this.logger.warn(`${what}${streak}; said again at the ${nextLoggedRepeat(count)}th time in a row or when the error changes`, { ...fields, error: reason });
  }

  /** `what` worked: when it had failed, says `message` once, with how long it lasted. */
  succeeded(what: string, message: string): void {
    const prev = this.streaks.get(what);
    if (prev === undefined) return;
    this.streaks.delete(what);
    const times = prev.count === 1 ? 'once' : `${prev.count} times in a row`;
    this.logger.info(`${message} (it failed ${times} over ${seconds(this.clock.now() - prev.since)} s)`);
  }
}

function seconds(ms: number): number {
  return Math.round(ms / 100) / 10;
}
