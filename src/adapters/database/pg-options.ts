import type { ParameterValue } from '../../domain/cluster/config/config.js';
import type { Logger } from '../../ports/logger.js';
import type { BasebackupOptions, ReplicaMethod } from './pg-replica-methods.js';
import type { CustomBootstrap } from './pg-custom-bootstrap.js';

/** A database role and its optional password. */
export interface PgCredentials {
  readonly username: string;
  readonly password?: string;
}

/** Construction options of PgDatabase (the `db` section of the local YAML plus identity). */
export interface PgDatabaseOptions {
  /** Member name: application_name towards the upstream and basis of this member's slot name. */
  readonly name: string;
  /** Cluster name (cluster_name parameter). */
  readonly scope: string;
  readonly dataDir: string;
  /** PostgreSQL binaries; default /usr/lib/postgresql/15/bin. */
  readonly binDir?: string;
  /** `host:port` the server listens on (listen_addresses, port). */
  readonly listen: string;
  /** `host:port` other members use to reach this server. */
  readonly connectAddress: string;
  readonly superuser: PgCredentials;
  readonly replication: PgCredentials;
  /** The role pg_rewind logs in as on its source; absent: the superuser. */
  readonly rewind?: PgCredentials | null;
  /** OS user running the server and its tools; default 'postgres' when this process is root, else none (run directly). */
  readonly runAsUser?: string;
  /** Local `db.parameters`: win over the dynamic ones. */
  readonly localParameters?: Readonly<Record<string, ParameterValue>>;
  /** Extra pg_hba.conf lines, placed before the generated ones (first match wins). */
  readonly pgHba?: readonly string[];
  /** `db.pg_ident`: the whole of pg_ident.conf (user name maps); absent: the data directory's own file is left as it is. */
  readonly pgIdent?: readonly string[] | null;
  /**
   * `db.use_unix_socket`: the agent's own sessions go over the server's Unix socket (the
   * directory the running server names in postmaster.pid) instead of TCP on loopback; default false.
   */
  readonly useUnixSocket?: boolean;
  /** bootstrap.initdb: `'data-checksums'` flags and `{encoding: 'UTF8'}` options. */
  readonly initdbOptions?: readonly (string | Readonly<Record<string, string>>)[];
  /** The server's log (pg_ctl -l): outside the data directory; default `<dataDir>-log/postgresql.log`. */
  readonly logFile?: string;
  /** Bound on pg_basebackup and the replica creation commands; default none (large clusters take long). */
  readonly createReplicaTimeoutMs?: number;
  /** `db.create_replica_methods`: how replicas are created, tried in order; default `['basebackup']`. */
  readonly createReplicaMethods?: readonly string[];
  /** The replica creation methods the local configuration defines (`db.<name>`). */
  readonly replicaMethods?: Readonly<Record<string, ReplicaMethod>>;
  /** `db.basebackup`: extra pg_basebackup options. */
  readonly basebackupOptions?: BasebackupOptions;
  /** `bootstrap.method` and its definition: a custom bootstrap replaces initdb; null or absent: initdb. */
  readonly customBootstrap?: CustomBootstrap | null;
  /** Bound on pg_rewind; default none. */
  readonly rewindTimeoutMs?: number;
  /** Hard bound on a stop called without a timeout, and on the immediate stop after escalation; default 300 000. */
  readonly stopHardLimitMs?: number;
  /** Awaited before a fast or smart stop signals the postmaster (the operator's `db.before_stop`); must not throw. */
  readonly beforeStop?: () => Promise<void>;
  readonly logger?: Logger;
}

/** Options with every default applied and addresses split. */
export interface ResolvedPgOptions
  extends Required<Omit<PgDatabaseOptions, 'runAsUser' | 'logger' | 'createReplicaTimeoutMs' | 'rewindTimeoutMs' | 'customBootstrap' | 'basebackupOptions' | 'pgIdent' | 'rewind'>> {
  readonly runAsUser: string | null;
  /** The role pg_rewind logs in as: `db.authentication.rewind`, else the superuser. */
  readonly rewind: PgCredentials;
  readonly pgIdent: readonly string[] | null;
  readonly listenHost: string;
  readonly listenPort: number;
  /** Host our own probe connects to (loopback when listening on a wildcard). */
  readonly localHost: string;
  readonly createReplicaTimeoutMs: number;
  readonly rewindTimeoutMs: number;
  readonly logger: Logger;
  readonly customBootstrap: CustomBootstrap | null;
  readonly basebackupOptions: BasebackupOptions;
}

/** Default directory of the PostgreSQL 15 binaries on Debian. */
export const DEFAULT_BIN_DIR = '/usr/lib/postgresql/15/bin';

/** Splits `host:port` (IPv6 in brackets allowed). */
export function splitHostPort(value: string, what: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port > 0 && port < 65536)) throw new Error(`${what}: expected host:port, got ${JSON.stringify(value)}`);
  return { host: m[1] ?? m[2] ?? '', port };
}

const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};

function loopbackFor(host: string): string {
  const first = host.split(',')[0]!.trim();
  if (first === '' || first === '*' || first === '0.0.0.0') return '127.0.0.1';
  if (first === '::') return '::1';
  return first;
}

/**
 * The URL a local script reaches the server at as `user` (database `postgres`), without a
 * password (it goes in the environment): on the loopback address of `listen`, or with
 * `socket` over the Unix socket, in that directory or (`socket.dir` null) libpq's default one.
 */
export function localUrl(listen: string, user: string, socket?: { readonly dir: string | null }): string {
  const { host, port } = splitHostPort(listen, 'db.listen');
  if (socket) return `postgresql://${encodeURIComponent(user)}@/postgres?${socket.dir ? `host=${encodeURIComponent(socket.dir)}&` : ''}port=${port}`;
  const local = loopbackFor(host);
  return `postgresql://${encodeURIComponent(user)}@${local.includes(':') ? `[${local}]` : local}:${port}/postgres`;
}

/**
 * The Unix socket directory a client should use of a `unix_socket_directories` value: its first
 * absolute path (abstract sockets, `@name`, and relative paths are skipped); null when none.
 */
export function firstSocketDir(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  return value.split(',').map((d) => d.trim().replace(/^"(.*)"$/, '$1')).find((d) => d.startsWith('/')) ?? null;
}

/** The OS user the server runs as by default: `postgres` when this process is root (PostgreSQL refuses root), else none. */
export function defaultRunAsUser(): string | null {
  return process.getuid?.() === 0 ? 'postgres' : null;
}

/** Applies defaults and validates the addresses. */
export function resolveOptions(o: PgDatabaseOptions): ResolvedPgOptions {
  const listen = splitHostPort(o.listen, 'db.listen');
  splitHostPort(o.connectAddress, 'db.connect_address');
  return {
    name: o.name,
    scope: o.scope,
    dataDir: o.dataDir,
    binDir: o.binDir ?? DEFAULT_BIN_DIR,
    listen: o.listen,
    connectAddress: o.connectAddress,
    superuser: o.superuser,
    replication: o.replication,
    rewind: o.rewind ?? o.superuser,
    runAsUser: o.runAsUser ?? defaultRunAsUser(),
    localParameters: o.localParameters ?? {},
    pgHba: o.pgHba ?? [],
    pgIdent: o.pgIdent ?? null,
    useUnixSocket: o.useUnixSocket ?? false,
    initdbOptions: o.initdbOptions ?? [],
    logFile: o.logFile ?? `${o.dataDir.replace(/\/+$/, '')}-log/postgresql.log`,
    createReplicaTimeoutMs: o.createReplicaTimeoutMs ?? 0,
    createReplicaMethods: o.createReplicaMethods?.length ? o.createReplicaMethods : ['basebackup'],
    replicaMethods: o.replicaMethods ?? {},
    basebackupOptions: o.basebackupOptions ?? {},
    customBootstrap: o.customBootstrap ?? null,
    rewindTimeoutMs: o.rewindTimeoutMs ?? 0,
    stopHardLimitMs: o.stopHardLimitMs ?? 300_000,
    beforeStop: o.beforeStop ?? (async () => undefined),
    listenHost: listen.host,
    listenPort: listen.port,
    localHost: loopbackFor(listen.host),
    logger: o.logger ?? silentLogger,
  };
}
