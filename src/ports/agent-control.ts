import type { HistoryLine } from '../domain/cluster/model/cluster.js';
import type { NodeSnapshot } from '../domain/cluster/model/snapshot.js';

/** Conditions and options of a restart (`POST /restart`). */
export interface RestartRequest {
  /** true: only if a restart is pending; false/absent: unconditional. */
  readonly restart_pending?: boolean;
  /** Only if the node's role equals this. */
  readonly role?: 'primary' | 'standby_leader' | 'replica';
  /** Only if the server version is lower than this (`X.Y` or `X.Y.Z`). */
  readonly db_version?: string;
  /** Seconds to wait for the server to accept connections (overrides primary_start_timeout). */
  readonly timeout?: number;
  /** ISO 8601 with zone: schedule instead of restarting now. */
  readonly schedule?: string;
}

/** Result of an action: `ok` false carries a stable `error` code and a message for the API to map. */
export type ActionResult =
  | { readonly ok: true; readonly message: string }
  | { readonly ok: false; readonly error: string; readonly message: string };

/**
 * What the REST API may ask of the running agent. Implemented by the HA loop; every call
 * returns promptly except the immediate actions, which wait for their outcome.
 */
export interface AgentControl {
  /** The latest published snapshot. Never blocks, never throws. */
  snapshot(): NodeSnapshot;
  /** Wakes the loop now (after a config or failover-key write). Never throws. */
  wake(): void;
  /** Restarts now (waiting for the outcome) when no `schedule`; otherwise records a scheduled restart (`scheduled` true). */
  restart(req: RestartRequest): Promise<ActionResult & { readonly scheduled?: boolean }>;
  /** Removes the scheduled restart; false when none was scheduled. */
  cancelScheduledRestart(): Promise<boolean>;
  /** Starts a reinitialization in the background (replicas only). */
  reinitialize(req: { readonly force: boolean; readonly fromLeader: boolean }): Promise<ActionResult>;
  /** Re-reads the local configuration file on the next tick. */
  reload(): Promise<ActionResult>;
  /** Timeline history for `/history` (DCS history key, else the server's history files). */
  history(): Promise<readonly HistoryLine[]>;
  /** A leader's failsafe ping (`POST /failsafe`): accept while we have no DCS and agree with it. */
  acceptFailsafe(body: { readonly name: string; readonly members: Readonly<Record<string, string>> }): boolean;
}
/** Inversify token of the AgentControl port. */
export const AgentControl = Symbol.for('warden.AgentControl');
