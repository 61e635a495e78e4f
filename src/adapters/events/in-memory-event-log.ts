import type { Clock } from '../../ports/clock.js';
import type { ClusterEvent, ClusterEventType, EventLog } from '../../ports/events.js';
import type { Logger } from '../../ports/logger.js';

/** Options of the in-memory event log. */
export interface InMemoryEventLogOptions {
  /** The member the events are reported by. */
  readonly member: string;
  readonly clock: Clock;
  /** Every event is logged too (info level, `event` field); null: not logged. */
  readonly logger: Logger | null;
  /** How many events the history keeps for `Last-Event-ID` (at least 1). */
  readonly capacity: number;
}

/** Events whose type says something went wrong: logged as warnings. */
const WARNING_TYPES = new Set<ClusterEventType>(['leader_lost', 'switchover_failed', 'failover_failed', 'no_candidate', 'fencing', 'callback_failed']);

/**
 * The agent's event stream in memory: a ring of the last `capacity` events and a set of
 * subscribers called synchronously (the HTTP adapter's subscribers only queue a write).
 * Ids are `<start>-<sequence>` with the agent's start time in base 36, so a client that
 * resumes with an id of an earlier run of the agent gets the whole history instead of a gap.
 */
export class InMemoryEventLog implements EventLog {
  private readonly ring: ClusterEvent[] = [];
  private readonly listeners = new Set<(event: ClusterEvent) => void>();
  private readonly epoch: string;
  private seq = 0;
  private lastTime = 0;

  constructor(private readonly options: InMemoryEventLogOptions) {
    this.epoch = options.clock.now().toString(36);
  }

  emit(type: ClusterEventType, reason: string, data?: Readonly<Record<string, unknown>>): ClusterEvent {
    // Times never go backwards within one stream, so merged streams sort stably.
    const now = Math.max(this.options.clock.now(), this.lastTime);
    this.lastTime = now;
    this.seq += 1;
    const event: ClusterEvent = Object.freeze({
      id: `${this.epoch}-${this.seq}`,
      time: new Date(now).toISOString(),
      member: this.options.member,
      type,
      reason,
      ...(data && Object.keys(data).length > 0 ? { data: Object.freeze({ ...data }) } : {}),
    });
    this.ring.push(event);
    if (this.ring.length > Math.max(1, this.options.capacity)) this.ring.shift();
    const log = this.options.logger;
    if (log) (WARNING_TYPES.has(type) ? log.warn : log.info).call(log, `event ${type}: ${reason}`, { event: type, event_id: event.id, ...(event.data ?? {}) });
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A subscriber's failure is its own; the others still hear the event.
      }
    }
    return event;
  }

  since(lastId: string | null): readonly ClusterEvent[] {
    if (lastId === null) return [...this.ring];
    const m = /^([0-9a-z]+)-(\d+)$/.exec(lastId.trim());
    if (!m || m[1] !== this.epoch) return [...this.ring];
    const after = Number(m[2]);
    return this.ring.filter((e) => Number(e.id.slice(this.epoch.length + 1)) > after);
  }

  subscribe(listener: (event: ClusterEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Number of live subscribers (for tests and metrics). */
  get subscribers(): number {
    return this.listeners.size;
  }
}
