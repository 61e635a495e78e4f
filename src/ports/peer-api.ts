import type { NodeStatus } from '../domain/cluster/model/status.js';
import type { ClusterEvent } from './events.js';

/** The REST API of other members, as the leader race and failsafe mode use it. */
export interface PeerApi {
  /**
   * GET `<apiUrl>/node`; null when unreachable, not 200, or slower than `timeoutMs`. With
   * `fresh`, the member probes its server before it answers (its published status may be a
   * loop old). Never throws.
   */
  fetchStatus(apiUrl: string, timeoutMs: number, opts?: { readonly fresh?: boolean }): Promise<NodeStatus | null>;
  /** POST `<apiUrl>/failsafe` with the failsafe members; true only on a 200 within `timeoutMs`. Never throws. */
  postFailsafe(apiUrl: string, body: { readonly name: string; readonly members: Readonly<Record<string, string>> }, timeoutMs: number): Promise<boolean>;
  /** GET `<apiUrl>/events` (the status page shows every member's); empty when unreachable, refused or slower than `timeoutMs`. Never throws. */
  fetchEvents(apiUrl: string, timeoutMs: number): Promise<readonly ClusterEvent[]>;
}
/** Inversify token of the PeerApi port. */
export const PeerApi = Symbol.for('warden.PeerApi');
