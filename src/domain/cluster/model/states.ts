/**
 * Database process states. The numbers are a public contract (the `svc_database_state`
 * metric): they never change and new states get new numbers.
 */
export const DATABASE_STATES = [
  { value: 0, name: 'initdb', text: 'initializing new cluster' },
  { value: 1, name: 'initdb_failed', text: 'initdb failed' },
  { value: 2, name: 'custom_bootstrap', text: 'running custom bootstrap script' },
  { value: 3, name: 'custom_bootstrap_failed', text: 'custom bootstrap failed' },
  { value: 4, name: 'creating_replica', text: 'creating replica' },
  { value: 5, name: 'running', text: 'running' },
  { value: 6, name: 'starting', text: 'starting' },
  { value: 7, name: 'bootstrap_starting', text: 'starting after custom bootstrap' },
  { value: 8, name: 'start_failed', text: 'start failed' },
  { value: 9, name: 'restarting', text: 'restarting' },
  { value: 10, name: 'restart_failed', text: 'restart failed' },
  { value: 11, name: 'stopping', text: 'stopping' },
  { value: 12, name: 'stopped', text: 'stopped' },
  { value: 13, name: 'stop_failed', text: 'stop failed' },
  { value: 14, name: 'crashed', text: 'crashed' },
] as const;

/** Identifier of a database state (`running`, `start_failed`, ...). */
export type DatabaseState = (typeof DATABASE_STATES)[number]['name'];

/** Metric value for a state name; -1 for anything unknown. */
export function stateNumber(state: string): number {
  const found = DATABASE_STATES.find((s) => s.name === state || s.text === state);
  return found ? found.value : -1;
}

/** Human state string used in documents and member keys (`initializing new cluster`, ...). */
export function stateText(state: DatabaseState): string {
  return DATABASE_STATES.find((s) => s.name === state)!.text;
}

/** State identifier from a state string or identifier; undefined when unknown. */
export function parseState(textOrName: string): DatabaseState | undefined {
  return DATABASE_STATES.find((s) => s.text === textOrName || s.name === textOrName)?.name;
}

/** HELP text of the state metric: the whole mapping, so a dashboard needs no lookup table. */
export function stateMetricHelp(): string {
  return `Database state: ${DATABASE_STATES.map((s) => `${s.value}=${s.name}`).join(', ')}; unknown=-1`;
}

/** Role a node reports. The last three are transitional, while the database is not running. */
export type Role = 'primary' | 'replica' | 'standby_leader' | 'uninitialized' | 'demoted' | 'promoted';

/** How a replica receives WAL. */
export type ReplicationState = 'streaming' | 'in archive recovery';

/** Role of a member in the cluster document. */
export type ClusterRole = 'leader' | 'standby_leader' | 'sync_standby' | 'quorum_standby' | 'replica';
