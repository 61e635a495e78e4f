/**
 * The agent's own measurements, fed by the HA loop and exposed on `GET /metrics` (spec §9:
 * loop duration, DCS errors, leader changes). Every method returns at once and never throws.
 */
export interface AgentMetricsSink {
  /** One HA loop run finished after `seconds`. */
  loopCompleted(seconds: number): void;
  /** A DCS call failed; `operation` is a short fixed name (`read`, `keepalive`, `write`, ...), not free text. */
  dcsError(operation: string): void;
  /** The leader key now names `leader` (null: the cluster is leaderless), different from the last one seen. */
  leaderChanged(leader: string | null): void;
}
/** Inversify token of the AgentMetricsSink port. */
export const AgentMetricsSink = Symbol.for('warden.AgentMetricsSink');
