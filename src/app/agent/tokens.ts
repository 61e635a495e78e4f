import type { LocalOptions } from '../../domain/cluster/ha/decision.js';
import type { NodeSettings } from '../../domain/cluster/model/node.js';
import type { Problem } from '../../domain/errors.js';

/** The node-local settings the HA loop works with (from the YAML file). */
export interface AgentSettings {
  readonly node: NodeSettings;
  readonly local: LocalOptions;
}

/**
 * Where the HA loop gets its local settings: the ones in force, and a re-read of the
 * configuration file for `POST /reload`. Bound in the container to the local-config loader.
 */
export interface AgentSettingsSource {
  /** Settings in force. Never throws. */
  current(): AgentSettings;
  /** Re-reads the file; throws (typed, with every problem) when it is invalid, and the old settings stay. */
  reload(): Promise<AgentSettings>;
  /** Reads the file and lists its problems without applying it; [] when it is valid. */
  check?(): Promise<readonly Problem[]>;
  /** Settings the file changed since the agent started that apply only when it starts again (their paths). */
  appliedAtNextStart?(): readonly string[];
}
/** Inversify token of the AgentSettingsSource. */
export const AgentSettingsSource = Symbol.for('warden.AgentSettingsSource');

/** A settings source that never changes (tests, embedding). */
export function fixedSettings(settings: AgentSettings): AgentSettingsSource {
  return { current: () => settings, reload: async () => settings };
}

/** Tunables of the HA loop; the defaults suit production. */
export interface HaLoopOptions {
  /** Bound on each peer's GET /node during a race (default 2000 ms). */
  readonly peerTimeoutMs?: number;
  /** Bound on each POST /failsafe (default 2000 ms). */
  readonly failsafeTimeoutMs?: number;
  /** How often the snapshot is refreshed from the local server between ticks (default 1000 ms; 0: only at ticks). */
  readonly snapshotRefreshMs?: number;
}
/** Inversify token of the (optional) HaLoopOptions. */
export const HaLoopOptions = Symbol.for('warden.HaLoopOptions');
