import type { HookCall } from '../../adapters/callbacks/child-process-hook-scripts.js';
import { firstSocketDir, localUrl } from '../../adapters/database/pg-options.js';
import type { LocalConfig } from './local-config.js';

/** libpq options of the post_bootstrap script's sessions: commits wait for no standby (there is none yet) and no statement is cut short. */
const POST_BOOTSTRAP_PGOPTIONS = '-c synchronous_commit=local -c statement_timeout=0';

/** The Unix socket directory the files ask the new primary for (local parameters first); null: PostgreSQL's default, which libpq knows. */
function socketDirOf(cfg: LocalConfig): string | null {
  const dcsDb = cfg.bootstrap.dcs['db'];
  const dcsParameters = dcsDb !== null && typeof dcsDb === 'object' ? (dcsDb as { parameters?: Record<string, unknown> }).parameters : undefined;
  return firstSocketDir(cfg.db.parameters['unix_socket_directories'] ?? dcsParameters?.['unix_socket_directories']);
}

/**
 * How `bootstrap.post_bootstrap` is called, as Patroni calls it: the superuser's URL on the
 * loopback address as its one argument (over the Unix socket with `db.use_unix_socket`), the password in the environment (never on a command
 * line), and no time limit (it may load a whole schema).
 */
export function postBootstrapCall(cfg: LocalConfig): HookCall {
  const superuser = cfg.db.authentication.superuser;
  return {
    args: [localUrl(cfg.db.listen, superuser.username, cfg.db.use_unix_socket ? { dir: socketDirOf(cfg) } : undefined)],
    env: { ...(superuser.password ? { PGPASSWORD: superuser.password } : {}), PGOPTIONS: POST_BOOTSTRAP_PGOPTIONS },
    untimed: true,
  };
}
