import type { NodeSettings } from '../../domain/cluster/model/node.js';
import type { AccessSettings } from '../../adapters/http/auth.js';
import type { AgentSettings, AgentSettingsSource } from './tokens.js';
import type { Problem } from '../../domain/errors.js';
import { LocalConfigError, type LocalConfig } from './local-config-types.js';
import { etcd3CredentialsReloadable } from './etcd3-connection.js';
import { replicaMethodsOf } from './local-config-sections.js';

/** `http(s)://<restapi.connect_address>`: how peers and tools reach this node's API. */
export function apiUrlOf(cfg: LocalConfig): string {
  return `${cfg.restapi.certfile ? 'https' : 'http'}://${cfg.restapi.connect_address}`;
}

/** The node settings the HA decisions need, from the local file. */
export function nodeSettingsOf(cfg: LocalConfig, svcVersion: string): NodeSettings {
  return {
    scope: cfg.scope,
    name: cfg.name,
    apiUrl: apiUrlOf(cfg),
    connUrl: `postgres://${cfg.db.connect_address}/postgres`,
    tags: cfg.tags,
    watchdogMode: cfg.watchdog.mode,
    svcVersion,
  };
}

/** Whether a method of `db.create_replica_methods` restores without a running server (`no_leader`). */
function replicaWithoutLeader(cfg: LocalConfig): boolean {
  const methods = replicaMethodsOf(cfg.db);
  return cfg.db.create_replica_methods.some((name) => methods[name]?.no_leader === true);
}

/** The HA loop's view of the local file. */
export function agentSettingsOf(cfg: LocalConfig, svcVersion: string): AgentSettings {
  return {
    node: nodeSettingsOf(cfg, svcVersion),
    local: {
      bootstrapDcs: cfg.bootstrap.dcs,
      parameters: cfg.db.parameters,
      access: { hba: cfg.db.pg_hba, ident: cfg.db.pg_ident ?? null },
      watchdogSafetyMargin: cfg.watchdog.safety_margin,
      recoveryConf: cfg.db.recovery_conf,
      prePromote: cfg.db.pre_promote !== undefined,
      postBootstrap: cfg.bootstrap.post_bootstrap !== undefined,
      replicaWithoutLeader: replicaWithoutLeader(cfg),
    },
  };
}

/** The REST API's access control of the local file (`restapi.allowlist`, `verify_client`, `authentication`). */
export function accessSettingsOf(cfg: LocalConfig): AccessSettings {
  const auth = cfg.restapi.authentication;
  return { allowlist: cfg.restapi.allowlist, verifyClient: cfg.restapi.verify_client, authentication: auth ? { username: auth.username, password: auth.password ?? '' } : null };
}

/**
 * The local configuration file as the agent's settings source: `reload()` (POST /reload,
 * SIGHUP) re-reads and validates it; an invalid file throws LocalConfigError and the
 * settings in force stay. Settings that only take effect at start (listen addresses, TLS
 * files, etcd hosts, data directory) are read again but applied on the next start.
 */
export class FileSettingsSource implements AgentSettingsSource {
  private config: LocalConfig;
  private settings: AgentSettings;
  /** The file as the agent started with it: what start-only settings are running with. */
  private readonly started: LocalConfig;
  private readonly reloadListeners: ((config: LocalConfig) => void)[] = [];

  constructor(
    private readonly path: string,
    initial: LocalConfig,
    private readonly svcVersion: string,
    private readonly env: Readonly<Record<string, string | undefined>> = process.env,
    /** Reads the file (default: in this process, loading the parser on first use). */
    private readonly load: (path: string, env: Readonly<Record<string, string | undefined>>) => Promise<LocalConfig> = async (path, env) =>
      (await import('./local-config.js')).loadLocalConfig(path, env),
  ) {
    this.config = initial;
    this.started = initial;
    this.settings = agentSettingsOf(initial, svcVersion);
  }

  async check(): Promise<readonly Problem[]> {
    try {
      await this.load(this.path, this.env);
      return [];
    } catch (e) {
      if (e instanceof LocalConfigError) return e.problems;
      return [{ path: '', message: e instanceof Error ? e.message : String(e) }];
    }
  }

  appliedAtNextStart(): readonly string[] {
    return startOnlyChanges(this.started, this.config);
  }

  /** The local configuration in force. */
  get local(): LocalConfig {
    return this.config;
  }

  current(): AgentSettings {
    return this.settings;
  }

  async reload(): Promise<AgentSettings> {
    const next = await this.load(this.path, this.env);
    this.config = next;
    this.settings = agentSettingsOf(next, this.svcVersion);
    for (const listener of this.reloadListeners) listener(next);
    return this.settings;
  }

  /** Calls `listener` with the file after each successful reload (the listener must not throw). */
  onReload(listener: (config: LocalConfig) => void): void {
    this.reloadListeners.push(listener);
  }
}

/** The REST API's certificate files: re-read on every reload while it serves HTTPS. */
const TLS_FILES = ['restapi.certfile', 'restapi.keyfile', 'restapi.keyfile_password', 'restapi.cafile'];

/** etcd's client certificate files and user: taken anew on every reload while the agent reaches the same members the same way. */
const ETCD_CREDENTIALS = ['etcd3.cacert', 'etcd3.cert', 'etcd3.key', 'etcd3.username', 'etcd3.password'];

/** Parts of the local file a reload applies at once; every other change waits for the next start. */
const APPLIED_AT_ONCE = [
  'tags',
  'db.parameters',
  'db.pg_hba',
  'db.pg_ident',
  'db.recovery_conf',
  'bootstrap.dcs',
  'watchdog.safety_margin',
  'restapi.authentication',
  'restapi.allowlist',
  'restapi.allowlist_include_members',
  'restapi.http_extra_headers',
  // The scripts are read from the settings in force each time one runs.
  'db.callbacks',
  'db.callback_timeout',
  'db.pre_promote',
  'db.before_stop',
  'bootstrap.post_bootstrap',
];

/**
 * Paths of the settings that differ between two local files and apply only at start (listen
 * addresses, TLS files, etcd's members, the data directory, the database credentials, ...): a reload
 * reads them, and the log says they wait for a restart instead of letting the operator think
 * they apply. Values are not named (passwords are among them).
 */
export function startOnlyChanges(before: LocalConfig, after: LocalConfig): string[] {
  const out: string[] = [];
  // An API served over HTTPS before and after re-reads its certificate files (renewed in place or moved) at once.
  const tlsBoth = before.restapi.certfile !== undefined && after.restapi.certfile !== undefined;
  const etcdSame = etcd3CredentialsReloadable(before, after);
  const walk = (a: unknown, b: unknown, path: string): void => {
    if (APPLIED_AT_ONCE.includes(path) || (tlsBoth && TLS_FILES.includes(path)) || (etcdSame && ETCD_CREDENTIALS.includes(path))) return;
    const objects = a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b);
    if (!objects || path.split('.').length >= 3) {
      if (JSON.stringify(a) !== JSON.stringify(b)) out.push(path);
      return;
    }
    const keys = [...new Set([...Object.keys(a as object), ...Object.keys(b as object)])].sort();
    for (const k of keys) walk((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], path ? `${path}.${k}` : k);
  };
  walk(before, after, '');
  return out;
}
