/**
 * The agent's own measurements, fed by the HA loop and exposed on `GET /metrics`
 * (loop duration, DCS errors, leader changes). Every method returns at once and never throws.
 */
export interface AgentMetricsSink {
  /** One HA loop run finished after `seconds`. */
  loopCompleted(seconds: number): void;
  /** A DCS call failed; `operation` is a short fixed name (`read`, `keepalive`, `write`, ...), not free text. */
  dcsError(operation: string): void;
  /** The leader key now names `leader` (null: the cluster is leaderless), different from the last one seen. */
  leaderChanged(leader: string | null): void;
  /** An operation took `seconds` (failover: leader key gone to new primary writable; switchover: request to new primary writable; the others: start to end). */
  operationDuration(operation: MeasuredOperation, seconds: number): void;
  /** An operator's request was refused; `reason` is the refusal's stable code. */
  operationRefused(operation: string, reason: string): void;
  /** A callback command failed (exit code, signal, timeout or could not start). */
  callbackFailed(action: string): void;
}

/** Operations whose durations are measured as histograms. */
export type MeasuredOperation = 'failover' | 'switchover' | 'demote' | 'promote' | 'rewind' | 'fencing' | 'basebackup';
/** Inversify token of the AgentMetricsSink port. */
export const AgentMetricsSink = Symbol.for('warden.AgentMetricsSink');
