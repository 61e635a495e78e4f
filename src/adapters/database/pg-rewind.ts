import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { buildConninfo, type Endpoint } from './conninfo.js';
import { shutdownStateOf } from './pg-controldata.js';
import type { ResolvedPgOptions } from './pg-options.js';
import { runCommand } from './run-command.js';
import { pathExists } from './path-exists.js';

/** What pg_rewind did. */
export type RewindOutcome = 'rewound' | 'not_needed';

/** What pg_rewind did, and where the two servers' WAL parted (as it prints it: an LSN and a timeline). */
export interface RewindResult {
  readonly outcome: RewindOutcome;
  readonly divergedAt: { readonly lsn: string; readonly timeline: number } | null;
}

/** Where pg_rewind says the servers diverged, from its output; null when it does not say. */
export function divergencePoint(output: string): RewindResult['divergedAt'] {
  const m = /servers diverged at WAL location ([0-9A-F]+\/[0-9A-F]+) on timeline (\d+)/i.exec(output);
  return m ? { lsn: m[1]!, timeline: Number(m[2]) } : null;
}

const STANDBY_SIGNAL = 'standby.signal';
/** Where standby.signal waits while pg_rewind runs its single-user crash recovery. */
const STANDBY_SIGNAL_ASIDE = 'standby.signal.warden-rewind';


/**
 * pg_rewind of the stopped local data directory against `source` (the new primary), as the
 * rewind role (`db.authentication.rewind`, else the superuser). pg_rewind (PostgreSQL 13+) itself runs single-user crash recovery first when the
 * target was not shut down cleanly, which is what a crashed old primary needs. It needs
 * wal_log_hints or data checksums on the target: both are on here.
 *
 * A standby that crashed (or an old primary that a start as a standby left in recovery)
 * still has standby.signal, and a single-user server refuses standby mode ("standby mode
 * is not supported by single-user servers"): the file is set aside for the rewind. The
 * caller writes the recovery files afresh after a successful rewind; after a failed one the
 * file is put back.
 */
export async function pgRewind(opts: ResolvedPgOptions, source: Endpoint): Promise<RewindResult> {
  const conninfo = buildConninfo({
    host: source.host,
    port: source.port,
    user: opts.rewind.username,
    dbname: 'postgres',
    application_name: `${opts.name}_rewind`,
    connect_timeout: 10,
  });
  const signal = join(opts.dataDir, STANDBY_SIGNAL);
  const aside = join(opts.dataDir, STANDBY_SIGNAL_ASIDE);
  let setAside = false;
  if (await pathExists(signal)) {
    const state = await shutdownStateOf(opts.binDir, opts.dataDir, opts.runAsUser);
    if (state && !state.clean) {
      await rename(signal, aside);
      setAside = true;
    }
  }
  try {
    const { stdout, stderr } = await runCommand(join(opts.binDir, 'pg_rewind'), ['-D', opts.dataDir, `--source-server=${conninfo}`], {
      runAs: opts.runAsUser,
      timeoutMs: opts.rewindTimeoutMs,
      env: { LC_ALL: 'C', LANG: 'C', ...(opts.rewind.password ? { PGPASSWORD: opts.rewind.password } : {}) },
    });
    const output = `${stdout}\n${stderr}`;
    return { outcome: /no rewind required/i.test(output) ? 'not_needed' : 'rewound', divergedAt: divergencePoint(output) };
  } finally {
    // Put back in every case: after a success the caller rewrites the recovery files anyway.
    if (setAside && !(await pathExists(signal))) await rename(aside, signal).catch(() => undefined);
  }
}
