import { join } from 'node:path';
import { readControlFile, shutDownCleanly, stateName } from './pg-control-file.js';
import { runCommand } from './run-command.js';

/** `key: value` lines of pg_controldata. */
export type ControlData = Readonly<Record<string, string>>;

/** Runs pg_controldata on `dataDir`. Rejects with CommandFailure. */
export async function readControlData(binDir: string, dataDir: string, runAs: string | null): Promise<ControlData> {
  const { stdout } = await runCommand(join(binDir, 'pg_controldata'), ['-D', dataDir], {
    runAs,
    timeoutMs: 10_000,
    env: { LC_ALL: 'C', LANG: 'C' },
  });
  const out: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}

/** True when the control file says the server went down cleanly (pg_rewind needs that). */
export function cleanlyShutDown(cd: ControlData): boolean {
  const state = cd['Database cluster state'] ?? '';
  return state === 'shut down' || state === 'shut down in recovery';
}

/** Control-file lines of the settings a hot standby must match at least, by parameter name. */
const STANDBY_SETTINGS: Readonly<Record<string, string>> = {
  max_connections: 'max_connections setting',
  max_worker_processes: 'max_worker_processes setting',
  max_wal_senders: 'max_wal_senders setting',
  max_prepared_transactions: 'max_prepared_xacts setting',
  max_locks_per_transaction: 'max_locks_per_xact setting',
};

/**
 * The values PostgreSQL demands of a hot standby, as the control file records them (the
 * primary's, replayed from its WAL): a replica started with any of them lower refuses to start.
 */
export function standbyMinimums(cd: ControlData): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, line] of Object.entries(STANDBY_SETTINGS)) {
    const v = Number(cd[line]);
    if (Number.isInteger(v) && v >= 0) out[name] = v;
  }
  return out;
}

/** Where a data directory's last server left it: whether it went down cleanly, and the state's name. */
export interface ShutdownState {
  readonly clean: boolean;
  readonly state: string;
}

/**
 * The shutdown state of `dataDir`: from global/pg_control when its layout is known, otherwise
 * from pg_controldata; null when neither can tell.
 */
export async function shutdownStateOf(binDir: string, dataDir: string, runAs: string | null): Promise<ShutdownState | null> {
  const cf = await readControlFile(dataDir);
  if (cf) return { clean: shutDownCleanly(cf), state: stateName(cf.state) };
  const cd = await readControlData(binDir, dataDir, runAs).catch(() => null);
  return cd ? { clean: cleanlyShutDown(cd), state: cd['Database cluster state'] ?? '' } : null;
}

/**
 * The hot-standby minimums of `dataDir` (see standbyMinimums): from global/pg_control when its
 * layout is known, otherwise from pg_controldata; null when neither can tell.
 */
export async function standbyMinimumsOf(binDir: string, dataDir: string, runAs: string | null): Promise<Record<string, number> | null> {
  const cf = await readControlFile(dataDir);
  if (cf?.standbyMinimums) return { ...cf.standbyMinimums };
  const cd = await readControlData(binDir, dataDir, runAs).catch(() => null);
  return cd ? standbyMinimums(cd) : null;
}
