/** Every kind of event an agent reports on `GET /events`. */
export type ClusterEventType =
  | 'leader_acquired'
  | 'leader_lost'
  | 'role_changed'
  | 'demote_started'
  | 'demote_finished'
  | 'promote_started'
  | 'promote_finished'
  | 'restart_started'
  | 'restart_finished'
  | 'rewind_started'
  | 'rewind_finished'
  | 'reinitialize_started'
  | 'reinitialize_finished'
  | 'basebackup_started'
  | 'basebackup_finished'
  | 'switchover_requested'
  | 'switchover_refused'
  | 'switchover_completed'
  | 'switchover_failed'
  | 'failover_requested'
  | 'failover_refused'
  | 'failover_completed'
  | 'failover_failed'
  | 'no_candidate'
  | 'member_joined'
  | 'member_left'
  | 'paused'
  | 'resumed'
  | 'config_changed'
  | 'fencing'
  | 'callback_failed'
  | 'preferred_leader_switchover';

/** One event: what happened on which member, when, and why. */
export interface ClusterEvent {
  /** Unique on this agent: `<start>-<sequence>`; a resumed stream continues after it. */
  readonly id: string;
  /** ISO 8601 (UTC, milliseconds). */
  readonly time: string;
  /** The member that reports it. */
  readonly member: string;
  readonly type: ClusterEventType;
  /** A sentence for a person: why it happened (or was refused). */
  readonly reason: string;
  /** Facts of the event (durations in `duration_ms`, the member concerned, changed keys...). */
  readonly data?: Readonly<Record<string, unknown>>;
}

/**
 * The agent's event stream: what the HA loop and the operator commands report, kept in a
 * bounded history and delivered to live subscribers. Every method returns at once and never
 * throws; a slow subscriber never delays the one who emits.
 */
export interface EventLog {
  /** Records an event now and delivers it to every subscriber; returns it. */
  emit(type: ClusterEventType, reason: string, data?: Readonly<Record<string, unknown>>): ClusterEvent;
  /**
   * The history after the event `lastId` (everything kept when it is null, unknown or from an
   * earlier start of the agent), oldest first.
   */
  since(lastId: string | null): readonly ClusterEvent[];
  /** Calls `listener` with every later event; returns the unsubscribe function. */
  subscribe(listener: (event: ClusterEvent) => void): () => void;
}
/** Inversify token of the EventLog port. */
export const EventLog = Symbol.for('warden.EventLog');
