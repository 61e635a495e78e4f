import type { ParameterValue, RawConfig } from '../../domain/cluster/config/config.js';
import type { TagValue, WatchdogMode } from '../../domain/cluster/model/node.js';
import { ValidationError, type Problem } from '../../domain/errors.js';
import type { VerifyClient } from '../../adapters/http/auth.js';
import type { BasebackupOptions } from '../../adapters/database/pg-replica-methods.js';

// The local configuration's shape, defaults and error, without the parser: the running agent
// imports these; the parser (yaml, ajv) runs in the configuration process (config-process.ts).

/** Username and optional password. */
export interface Credentials {
  readonly username: string;
  readonly password?: string;
}

/** The node's local YAML configuration with defaults applied. */
export interface LocalConfig {
  readonly scope: string;
  readonly namespace: string;
  readonly name: string;
  readonly restapi: {
    readonly listen: string;
    readonly connect_address: string;
    readonly authentication?: Credentials;
    readonly certfile?: string;
    readonly keyfile?: string;
    readonly keyfile_password?: string;
    readonly cafile?: string;
    readonly verify_client: VerifyClient;
    readonly allowlist: readonly string[];
    /** The members' API hosts (their connect_address) are allowed too, as the cluster lists them. */
    readonly allowlist_include_members: boolean;
    readonly http_extra_headers: Readonly<Record<string, string>>;
    /** How many events `GET /events` keeps for clients that resume with Last-Event-ID. */
    readonly event_history: number;
  };
  readonly etcd3: {
    readonly hosts: readonly string[];
    readonly protocol?: 'http' | 'https';
    readonly username?: string;
    readonly password?: string;
    readonly cacert?: string;
    readonly cert?: string;
    readonly key?: string;
    /** The hosts are proxies or load balancers: the agent calls only them instead of learning etcd's members from them. */
    readonly use_proxies?: boolean;
  };
  readonly bootstrap: {
    readonly dcs: RawConfig;
    readonly initdb: readonly (string | Readonly<Record<string, string>>)[];
    /** `initdb`, or a custom bootstrap method defined as `bootstrap.<name>` (see customBootstrapOf). */
    readonly method: string;
    /** A script run on the new primary after the bootstrap (`<command> <superuser URL>`); the cluster is registered only when it succeeds. */
    readonly post_bootstrap?: string;
  };
  readonly db: {
    readonly listen: string;
    readonly connect_address: string;
    readonly data_dir: string;
    readonly bin_dir: string;
    /** Where PostgreSQL's server log goes (`postgresql.log`): outside the data directory, so a base backup neither copies it nor a reinitialize deletes it. */
    readonly log_dir: string;
    /** `rewind`: the role pg_rewind logs in as on its source (created with the grants it needs); absent: the superuser. */
    readonly authentication: { readonly superuser: Credentials; readonly replication: Credentials; readonly rewind?: Credentials };
    readonly parameters: Readonly<Record<string, ParameterValue>>;
    readonly pg_hba: readonly string[];
    /** The whole of pg_ident.conf (user name maps); absent: the data directory's own file is left alone. */
    readonly pg_ident?: readonly string[];
    /** The agent and the post_bootstrap script reach the server over its Unix socket (peer authentication works) instead of TCP on loopback. */
    readonly use_unix_socket: boolean;
    /** Commands run on database events, called as `<command> <action> <role> <scope>`. */
    readonly callbacks: Readonly<Partial<Record<CallbackActionName, string>>>;
    /** Seconds a callback, `pre_promote` or `before_stop` may run before it is killed. */
    readonly callback_timeout: number;
    /** A fencing script run after the leader key is taken and before the promotion: a failure cancels the promotion. */
    readonly pre_promote?: string;
    /** A script run before the agent stops the server (not for an immediate stop); the stop waits for it. */
    readonly before_stop?: string;
    /** How replicas are created, tried in order: `basebackup` or methods defined as `db.<name>` (see replicaMethodsOf). */
    readonly create_replica_methods: readonly string[];
    /** Extra pg_basebackup options. */
    readonly basebackup: BasebackupOptions;
    /** Recovery settings of this node as a replica (restore_command...). */
    readonly recovery_conf: Readonly<Record<string, ParameterValue>>;
  };
  readonly tags: Readonly<Record<string, TagValue>>;
  readonly watchdog: { readonly mode: WatchdogMode; readonly device: string; readonly safety_margin: number };
  /** The fencer process that stops PostgreSQL when the agent cannot (on by default); `socket` is where it listens. */
  readonly fencer: { readonly enabled: boolean; readonly socket: string | null };
  /** Logs: `level` for every line, `levels` per component (dcs, database, restapi, fencer-client), `format` json or text, `file` instead of stdout. */
  readonly log: {
    readonly level: LogLevelName;
    readonly levels: Readonly<Record<string, LogLevelName>>;
    readonly format: 'json' | 'text';
    readonly file: string | null;
  };
}

/** The callback actions of `db.callbacks`. */
export type CallbackActionName = 'on_start' | 'on_stop' | 'on_restart' | 'on_reload' | 'on_role_change';

/** Default of `restapi.event_history`. */
export const DEFAULT_EVENT_HISTORY = 1000;
/** Default of `db.callback_timeout` (seconds). */
export const DEFAULT_CALLBACK_TIMEOUT = 60;

/** A level of `log.level` / `log.levels`. */
export type LogLevelName = 'debug' | 'info' | 'warn' | 'error';

/** A quoted value of more than this many characters is shortened in a problem: a value of 100,000 characters is no message. */
const QUOTED_VALUE_MAX = 80;

/** `message` with every quoted (JSON) string in it longer than QUOTED_VALUE_MAX cut, saying how long it was. */
export function shortenQuotedValues(message: string): string {
  return message.replace(/"(?:[^"\\\n]|\\.)*"/g, (q) => (q.length - 2 > QUOTED_VALUE_MAX ? `${q.slice(0, QUOTED_VALUE_MAX - 20)}..." (${q.length - 2} characters)` : q));
}

/** The local configuration is unusable; `problems` lists every one found (path, expected, got). Exit code 2. */
export class LocalConfigError extends ValidationError {
  constructor(
    readonly source: string,
    problems: readonly Problem[],
    /** The parsed file (environment overrides applied) when it was YAML: what the machine checks can still read from it. */
    readonly document?: Readonly<Record<string, unknown>>,
  ) {
    // Values are quoted in full where they are checked; the file's owner only needs to recognise them.
    super(
      problems.map((p) => ({ path: p.path, message: shortenQuotedValues(p.message) })),
      'invalid_local_config',
    );
    problems = this.problems;
    this.message = `invalid configuration ${source}:\n${problems.map((p) => `  - ${p.path ? `${p.path}: ` : ''}${p.message}`).join('\n')}`;
  }
}

/** Default of `db.log_dir`: a sibling of the data directory (`/var/lib/warden/node1` logs to `/var/lib/warden/node1-log`). */
export function defaultLogDir(dataDir: string): string {
  return `${dataDir.replace(/\/+$/, '')}-log`;
}

/** Default of `db.bin_dir` (Debian's PostgreSQL 15). */
export const DEFAULT_DB_BIN_DIR = '/usr/lib/postgresql/15/bin';
