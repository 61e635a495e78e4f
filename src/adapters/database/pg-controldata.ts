import { join } from 'node:path';
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
