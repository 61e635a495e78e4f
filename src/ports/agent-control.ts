import type { AgentCommandErrorCode, RestartConditions } from '../domain/cluster/ha/decision.js';
import type { HistoryLine, ScheduledRestart } from '../domain/cluster/model/cluster.js';
import type { NodeSnapshot } from '../domain/cluster/model/snapshot.js';
import type { NodeStatus } from '../domain/cluster/model/status.js';
import type { Problem } from '../domain/errors.js';

/** Outcome of a command the agent ran: `ok` false carries a stable code and a message. */
export type ActionResult =
  | { readonly ok: true; readonly message: string }
  | { readonly ok: false; readonly error: AgentCommandErrorCode; readonly message: string };

/** A leader's failsafe ping (`POST /failsafe`): its name and the members it counts on. */
export interface FailsafePing {
  readonly name: string;
  readonly members: Readonly<Record<string, string>>;
}

/**
 * The running agent, as operator commands (the use cases) reach it: its published state,
 * and its command inbox. Every call returns promptly except those that wait for an outcome.
 */
export interface AgentControl {
  /** The latest published snapshot. Never blocks, never throws. */
  snapshot(): NodeSnapshot;
  /** The status document with the local server probed now, not at the last loop (the leader race asks for it); null when it could not be probed. Never throws. */
  freshStatus(): Promise<NodeStatus | null>;
  /** Runs the HA loop now (after a write to the cluster store that it must act on). Never throws. */
  wake(): void;
  /** Re-reads the cluster now and republishes the snapshot, so a write just made shows in every later read. Throws DcsUnavailableError. */
  refreshView(): Promise<void>;
  /** Restarts the database when the conditions hold, and waits for the outcome. */
  restartNow(conditions: RestartConditions): Promise<ActionResult>;
  /** This node's scheduled restart, or null. Never throws. */
  scheduledRestart(): ScheduledRestart | null;
  /** Records (null: removes) this node's scheduled restart and republishes the snapshot. Never throws. */
  setScheduledRestart(restart: ScheduledRestart | null): void;
  /** Starts a reinitialization in the background (replicas only); resolves once it started or was refused. */
  reinitialize(opts: { readonly force: boolean; readonly fromLeader: boolean }): Promise<ActionResult>;
  /** Re-reads the local configuration file on the next run of the loop. Never throws. */
  requestReload(): void;
  /** Reads the local configuration file now and lists its problems ([] when it is valid), changing nothing. Never throws. */
  checkLocalConfig(): Promise<readonly Problem[]>;
  /** Timeline history from the local server's history files. Never throws: [] when unknown. */
  localHistory(): Promise<readonly HistoryLine[]>;
  /** A leader's failsafe ping: accepted while this node agrees it is the leader. Never throws. */
  acceptFailsafe(ping: FailsafePing): boolean;
}
/** Inversify token of the AgentControl port. */
export const AgentControl = Symbol.for('warden.AgentControl');
