import { existsSync, readFileSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { isIP } from 'node:net';
import type { LocalConfig } from './local-config-types.js';
import { GENERATED_HEADER } from '../../adapters/database/pg-config-files.js';

/** Whether `host:port` listens on loopback only. */
function loopbackOnly(listen: string): boolean {
  const host = listen.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  return host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));
}

/**
 * What a configuration allows that an operator may not mean to: said at every start and by
 * `warden --validate-config`, which still accepts the file.
 */
export function configWarnings(config: LocalConfig, configPath?: string, osUser: string = userInfo().username): string[] {
  const out: string[] = [];
  const { superuser, replication, rewind } = config.db.authentication;
  if (!superuser.password && !config.db.use_unix_socket) {
    out.push(
      `db.authentication.superuser has no password: PostgreSQL trusts every connection from this machine as ${superuser.username} (any local user can log in as the superuser); set one, or set db.use_unix_socket (peer authentication)`,
    );
  }
  if (!replication.password) {
    out.push(`db.authentication.replication has no password: only this machine may connect for replication (other members cannot stream from it); set one`);
  }
  if (rewind && rewind.username !== superuser.username && !rewind.password) {
    out.push(`db.authentication.rewind has no password: only this machine may log in as ${rewind.username} (other members cannot rewind from it); set one`);
  }
  const r = config.restapi;
  if (!r.authentication && r.verify_client !== 'required' && !loopbackOnly(r.listen)) {
    out.push(
      `restapi.authentication is not set: anyone who reaches ${r.listen}${r.allowlist.length ? ` from ${r.allowlist.join(', ')}` : ''} may change the configuration, restart PostgreSQL or fail over; set it (and TLS)`,
    );
  }
  if (r.certfile !== undefined && r.cafile === undefined && r.authentication) {
    out.push('restapi.cafile is not set: the agent sends the API credentials to its peers without verifying their certificates; set it to the CA that signed them');
  }
  if (configPath !== undefined && (superuser.password || replication.password || rewind?.password || r.authentication?.password)) {
    try {
      const mode = statSync(configPath).mode & 0o777;
      if (mode & 0o004) out.push(`${configPath} holds passwords and every user of this machine may read it (mode ${mode.toString(8).padStart(4, '0')}); chmod 0600 it`);
    } catch {
      // A file that cannot be read was reported already.
    }
  }
  const peer = peerLoginProblem(config, osUser);
  if (peer) out.push(peer);
  const settingsAway = serverSettingsElsewhere(config.db.data_dir);
  if (settingsAway) out.push(settingsAway);
  return out;
}

/**
 * A data directory holding a database but not the server's own settings file: initdb's
 * postgresql.conf, which the agent keeps as postgresql.base.conf and includes. Without it the
 * server runs on PostgreSQL's built-in defaults plus the configured parameters; the usual
 * cause is a layout that keeps the configuration outside the data directory (Patroni's
 * config_dir, Debian's /etc/postgresql), whose settings the agent never reads.
 */
function serverSettingsElsewhere(dataDir: string): string | null {
  if (!existsSync(join(dataDir, 'PG_VERSION')) || existsSync(join(dataDir, 'postgresql.base.conf'))) return null;
  let conf: string | null = null;
  try {
    conf = readFileSync(join(dataDir, 'postgresql.conf'), 'utf8');
  } catch {
    // No postgresql.conf at all: the settings are elsewhere.
  }
  // A postgresql.conf the agent did not write becomes the base file at the next start.
  if (conf !== null && !conf.startsWith(GENERATED_HEADER)) return null;
  return (
    `db.data_dir: ${dataDir} holds a database but no postgresql.base.conf: PostgreSQL will run on its built-in defaults plus the configured parameters ` +
    `(settings such as timezone, lc_messages, shared_buffers or yours are not read). A configuration kept outside the data directory ` +
    `(Patroni's config_dir, Debian's /etc/postgresql) is not used: copy its postgresql.base.conf (Debian: postgresql.conf) into ${dataDir} ` +
    `without the data_directory, hba_file, ident_file, external_pid_file and include lines, or move its settings into db.parameters`
  );
}

/**
 * Over the Unix socket the generated pg_hba.conf lets a local user in by peer authentication
 * only (`local all all peer`): an agent whose OS user is not named as the superuser is refused,
 * password or not, unless a `local` line of the operator's own (with a `map=` of db.pg_ident,
 * or a password method) comes first.
 */
function peerLoginProblem(config: LocalConfig, osUser: string): string | null {
  const superuser = config.db.authentication.superuser.username;
  if (!config.db.use_unix_socket || osUser === superuser || config.db.pg_hba.some((l) => /^\s*local\s/.test(l))) return null;
  return (
    `db.use_unix_socket: the agent runs as ${osUser} and logs in as ${superuser}, which the generated "local all all peer" line refuses: ` +
    `add a db.pg_hba line such as "local all ${superuser} peer map=agent" with db.pg_ident ["agent ${osUser} ${superuser}"], or run the agent as ${superuser}`
  );
}

