import type { NodeSettings } from '../../domain/cluster/model/node.js';
import type { AccessSettings } from '../../adapters/http/auth.js';
import type { LocalConfig } from './local-config-types.js';
import type { AgentSettings, AgentSettingsSource } from './tokens.js';

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

/** The HA loop's view of the local file. */
export function agentSettingsOf(cfg: LocalConfig, svcVersion: string): AgentSettings {
  return {
    node: nodeSettingsOf(cfg, svcVersion),
    local: { bootstrapDcs: cfg.bootstrap.dcs, parameters: cfg.db.parameters, watchdogSafetyMargin: cfg.watchdog.safety_margin, recoveryConf: cfg.db.recovery_conf },
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
    this.settings = agentSettingsOf(initial, svcVersion);
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
    return this.settings;
  }
}
