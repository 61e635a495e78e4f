import { join } from 'node:path';
import { buildConninfo, type Endpoint } from './conninfo.js';
import type { ResolvedPgOptions } from './pg-options.js';
import { runCommand } from './run-command.js';

/** What pg_rewind did. */
export type RewindOutcome = 'rewound' | 'not_needed';

/**
 * pg_rewind of the stopped local data directory against `source` (the new primary), as the
 * superuser. pg_rewind (PostgreSQL 13+) itself runs single-user crash recovery first when the
 * target was not shut down cleanly, which is what a crashed old primary needs. It needs
 * wal_log_hints or data checksums on the target: both are on here.
 */
export async function pgRewind(opts: ResolvedPgOptions, source: Endpoint): Promise<RewindOutcome> {
  const conninfo = buildConninfo({
    host: source.host,
    port: source.port,
    user: opts.superuser.username,
    dbname: 'postgres',
    application_name: `${opts.name}_rewind`,
    connect_timeout: 10,
  });
  const { stdout, stderr } = await runCommand(join(opts.binDir, 'pg_rewind'), ['-D', opts.dataDir, `--source-server=${conninfo}`], {
    runAs: opts.runAsUser,
    timeoutMs: opts.rewindTimeoutMs,
    env: { LC_ALL: 'C', LANG: 'C', ...(opts.superuser.password ? { PGPASSWORD: opts.superuser.password } : {}) },
  });
  return /no rewind required/i.test(stdout + stderr) ? 'not_needed' : 'rewound';
}
