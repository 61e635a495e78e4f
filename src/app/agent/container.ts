import { ProcessMetrics } from '../../adapters/metrics/process-metrics.js';
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Container } from 'inversify';
import { SystemClock } from '../../adapters/clock/system-clock.js';
import { PgDatabase } from '../../adapters/database/pg-database.js';
import { Etcd3GatewayClusterStore } from '../../adapters/cluster-store/etcd3-gateway-cluster-store.js';
import { createAgentApi, type AgentApi } from '../../adapters/http/agent-api.js';
import { AllowlistNames } from '../../adapters/http/allowlist-names.js';
import { createAgentServer, type AgentServer, type TlsSettings } from '../../adapters/http/server.js';
import { JsonLinesLogger } from '../../adapters/logger/json-lines-logger.js';
import { AgentMetrics } from '../../adapters/metrics/agent-metrics.js';
import { EventLoopDelayMonitor } from '../../adapters/metrics/event-loop-delay.js';
import { HttpPeerApi, type PeerCredentials, type PeerTls } from '../../adapters/peer/http-peer-api.js';
import { LinuxWatchdog } from '../../adapters/watchdog/linux-watchdog.js';
import { NoopWatchdog } from '../../adapters/watchdog/noop-watchdog.js';
import { AgentControl } from '../../ports/agent-control.js';
import { AgentMetricsSink } from '../../ports/agent-metrics.js';
import { Clock } from '../../ports/clock.js';
import { Database } from '../../ports/database.js';
import { ClusterStore } from '../../ports/cluster-store.js';
import { Logger } from '../../ports/logger.js';
import { PeerApi } from '../../ports/peer-api.js';
import { Watchdog } from '../../ports/watchdog.js';
import { Fencer } from '../../ports/fencer.js';
import { DisabledFencer } from '../../adapters/fencer/disabled-fencer.js';
import { FencerClient } from '../../adapters/fencer/fencer-client.js';
import { defaultFencerSocket } from '../../adapters/fencer/fencer-socket-path.js';
import { launcherNodeFlags } from './launcher-flags.js';
import { HaLoop } from './ha-loop.js';
import { EventLog } from '../../ports/events.js';
import { CallbackRunner } from '../../ports/callbacks.js';
import { InMemoryEventLog } from '../../adapters/events/in-memory-event-log.js';
import { ChildProcessCallbackRunner } from '../../adapters/callbacks/child-process-callback-runner.js';
import { ChildProcessHookScripts } from '../../adapters/callbacks/child-process-hook-scripts.js';
import { HookScripts } from '../../ports/hook-scripts.js';
import type { LocalConfig } from './local-config.js';
import { FileSettingsSource } from './local-settings.js';
import { allowlistEntries, apiAccess } from './api-access.js';
import { etcd3ConnectionOf, etcd3CredentialsOf, etcd3CredentialsReloadable } from './etcd3-connection.js';
import { customBootstrapOf, replicaMethodsOf } from './local-config-sections.js';
import { postBootstrapCall } from './post-bootstrap-call.js';
import { AgentSettingsSource, HaLoopOptions } from './tokens.js';
import { COMMAND_DCS_OPERATIONS, DcsErrorCountingStore } from './dcs-error-counting-store.js';

/** Tokens of the agent's composition root, besides the port tokens. */
export const AgentTokens = {
  /** The FileSettingsSource (also bound as AgentSettingsSource). */
  LocalSettings: Symbol.for('warden.agent.LocalSettings'),
  /** The AgentMetrics registry (also bound as AgentMetricsSink). */
  Metrics: Symbol.for('warden.agent.Metrics'),
  /** The EventLoopDelayMonitor the metrics read (started and stopped with the agent). */
  EventLoop: Symbol.for('warden.agent.EventLoop'),
  /** The HaLoop (also bound as AgentControl). */
  HaLoop: Symbol.for('warden.agent.HaLoop'),
  /** The REST API (its node:http request listener). */
  Api: Symbol.for('warden.agent.Api'),
  /** The HTTP(S) listener serving the API (not yet listening). */
  Server: Symbol.for('warden.agent.Server'),
  /** The addresses of the allowlist's host names (resolved before the API listens, then every minute). */
  AllowlistNames: Symbol.for('warden.agent.AllowlistNames'),
} as const;

/** Adapters to use instead of the production ones (embedding, tests). */
export interface AgentAdapterOverrides {
  readonly store?: ClusterStore;
  readonly database?: Database;
  readonly clock?: Clock;
  readonly watchdog?: Watchdog;
  readonly fencer?: Fencer;
  readonly peers?: PeerApi;
  readonly logger?: Logger;
  readonly haLoopOptions?: HaLoopOptions;
  readonly callbacks?: CallbackRunner;
  /** The blocking scripts (`db.pre_promote`, `db.before_stop`). */
  readonly hooks?: HookScripts;
}

/** What the composition root is built from. */
export interface AgentContainerOptions {
  readonly config: LocalConfig;
  /** The file `config` came from; POST /reload and SIGHUP re-read it. */
  readonly configPath: string;
  readonly svcVersion: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly overrides?: AgentAdapterOverrides;
  /** Reads the configuration file again on a reload (default: in this process). */
  readonly loadConfig?: (path: string, env: Readonly<Record<string, string | undefined>>) => Promise<LocalConfig>;
}


/** The fencer's launcher, at the same depth from src/app/agent and dist/app/agent. */
const FENCER_LAUNCHER = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'warden-fencer.js');

/** How the agent reaches its peers over HTTPS, from the local file's certificate files, read now. */
function peerTlsOf(cfg: LocalConfig): PeerTls {
  const r = cfg.restapi;
  const presentsCert = r.certfile !== undefined && r.verify_client !== 'none';
  return {
    // Peers' certificates are verified when a CA is configured (self-signed setups otherwise).
    rejectUnauthorized: r.cafile !== undefined,
    ...(r.cafile ? { ca: readFileSync(r.cafile) } : {}),
    ...(presentsCert ? { cert: readFileSync(r.certfile!), key: readFileSync(r.keyfile ?? r.certfile!) } : {}),
  };
}

/** The REST API's HTTPS settings of the local file; undefined: plain HTTP. */
function serverTlsOf(r: LocalConfig['restapi']): TlsSettings | undefined {
  return r.certfile
    ? {
        certfile: r.certfile,
        ...(r.keyfile ? { keyfile: r.keyfile } : {}),
        ...(r.keyfile_password !== undefined ? { keyfilePassword: r.keyfile_password } : {}),
        ...(r.cafile ? { cafile: r.cafile } : {}),
        verifyClient: r.verify_client,
      }
    : undefined;
}

/**
 * Calls `take` with the file after each reload, which reads certificate files again (renewed
 * in place is what a reload is for); a file that cannot be read or a key that does not fit
 * is logged as `failure` and what is in force stays.
 */
function onReloadReadFiles(settings: FileSettingsSource, logger: Logger, failure: string, take: (next: LocalConfig) => void): void {
  settings.onReload((next) => {
    try {
      take(next);
    } catch (e) {
      logger.error(failure, { error: e instanceof Error ? e.message : String(e) });
    }
  });
}

/**
 * Peers' APIs with the cluster's credentials as the local file says now and its certificate
 * files, both as of the last reload (a certificate renewed in place is read again then).
 */
function peerApiOf(cfg: LocalConfig, settings: FileSettingsSource, logger: Logger): HttpPeerApi {
  let tls = peerTlsOf(cfg);
  onReloadReadFiles(settings, logger, 'the REST API certificate files could not be read again: calls to the other members keep the ones in force', (next) => {
    tls = peerTlsOf(next);
  });
  let credentialsOf: LocalConfig['restapi']['authentication'] | null = null;
  let credentials: PeerCredentials | undefined;
  return new HttpPeerApi({
    auth: () => {
      const a = settings.local.restapi.authentication;
      if (a !== credentialsOf) {
        credentialsOf = a;
        credentials = a ? { username: a.username, password: a.password ?? '' } : undefined;
      }
      return credentials;
    },
    tls: () => tls,
  });
}

/**
 * The agent's composition root (Inversify): binds every port to its production adapter
 * (etcd v3 through its JSON gateway, PostgreSQL, system clock, Linux or no-op watchdog per
 * `watchdog.mode`, JSON lines logs, HTTP peers), the HA loop as AgentControl, the metrics registry as
 * AgentMetricsSink, the local file as AgentSettingsSource, and the REST API and its
 * listener. Every binding is a singleton; `overrides` swaps adapters (fakes for embedding).
 */
export function createAgentContainer(opts: AgentContainerOptions): Container {
  const { config: cfg, overrides = {} } = opts;
  const c = new Container({ defaultScope: 'Singleton' });
  const settings = new FileSettingsSource(opts.configPath, cfg, opts.svcVersion, opts.env ?? process.env, opts.loadConfig);

  c.bind<Logger>(Logger).toConstantValue(
    overrides.logger ?? JsonLinesLogger.create({ level: cfg.log.level, base: { scope: cfg.scope, name: cfg.name } }),
  );
  c.bind<Clock>(Clock).toConstantValue(overrides.clock ?? new SystemClock());
  c.bind<ClusterStore>(ClusterStore).toDynamicValue((ctx) => {
    if (overrides.store) return overrides.store;
    const logger = ctx.get<Logger>(Logger).child({ component: 'dcs' });
    // etcd's JSON gateway: no gRPC stack in the agent; the cluster is read from a watched copy.
    const store = new Etcd3GatewayClusterStore({ clock: ctx.get<Clock>(Clock), logger, watchedCopy: true, ...etcd3ConnectionOf(cfg) });
    // A rotated etcd password is taken too.
    onReloadReadFiles(settings, logger, 'the etcd client certificate files could not be read again: the ones in force stay', (next) => {
      if (!etcd3CredentialsReloadable(cfg, next)) return;
      const changed = store.reloadCredentials(etcd3CredentialsOf(next));
      if (changed.tls) logger.info('etcd client certificate files read again: new connections to etcd use them');
      if (changed.user) logger.info('etcd user or password changed: the agent authenticates to etcd again');
    });
    return store;
  });
  c.bind<Database>(Database).toDynamicValue((ctx) => {
    if (overrides.database) return overrides.database;
    const hooks = ctx.get<HookScripts>(HookScripts);
    return new PgDatabase({
      name: cfg.name,
      scope: cfg.scope,
      dataDir: cfg.db.data_dir,
      binDir: cfg.db.bin_dir,
      logFile: join(cfg.db.log_dir, 'postgresql.log'),
      listen: cfg.db.listen,
      connectAddress: cfg.db.connect_address,
      superuser: cfg.db.authentication.superuser,
      replication: cfg.db.authentication.replication,
      ...(cfg.db.authentication.rewind ? { rewind: cfg.db.authentication.rewind } : {}),
      localParameters: cfg.db.parameters,
      pgHba: cfg.db.pg_hba,
      ...(cfg.db.pg_ident ? { pgIdent: cfg.db.pg_ident } : {}),
      useUnixSocket: cfg.db.use_unix_socket,
      initdbOptions: cfg.bootstrap.initdb.map((o) => (typeof o === 'string' ? o : Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)])))),
      createReplicaMethods: cfg.db.create_replica_methods,
      replicaMethods: replicaMethodsOf(cfg.db),
      basebackupOptions: cfg.db.basebackup,
      customBootstrap: customBootstrapOf(cfg.bootstrap),
      beforeStop: async () => void (await hooks.run('before_stop')),
      logger: ctx.get<Logger>(Logger),
    });
  });
  c.bind<Fencer>(Fencer).toDynamicValue((ctx) => {
    if (overrides.fencer) return overrides.fencer;
    if (!cfg.fencer.enabled) return new DisabledFencer();
    const socketPath = cfg.fencer.socket ?? defaultFencerSocket(cfg.scope, cfg.name, cfg.db.data_dir);
    return new FencerClient({
      socketPath,
      dataDir: cfg.db.data_dir,
      spawn: { command: process.execPath, args: [...launcherNodeFlags(FENCER_LAUNCHER), FENCER_LAUNCHER, '-c', resolve(opts.configPath), '--socket', socketPath], logFile: socketPath.replace(/\.sock$/, '') + '.log' },
      clock: ctx.get<Clock>(Clock),
      logger: ctx.get<Logger>(Logger).child({ component: 'fencer-client' }),
    });
  });
  // With a fencer, the watchdog device belongs to it: a frozen agent must not keep the machine alive.
  c.bind<Watchdog>(Watchdog).toDynamicValue((ctx) => {
    if (overrides.watchdog) return overrides.watchdog;
    if (cfg.watchdog.mode === 'off') return new NoopWatchdog();
    const fencer = ctx.get<Fencer>(Fencer);
    return fencer instanceof FencerClient ? fencer : new LinuxWatchdog({ device: cfg.watchdog.device });
  });
  c.bind<PeerApi>(PeerApi).toDynamicValue((ctx) => overrides.peers ?? peerApiOf(cfg, settings, ctx.get<Logger>(Logger).child({ component: 'peers' })));
  if (overrides.haLoopOptions) c.bind<HaLoopOptions>(HaLoopOptions).toConstantValue(overrides.haLoopOptions);

  c.bind<FileSettingsSource>(AgentTokens.LocalSettings).toConstantValue(settings);
  c.bind<AgentSettingsSource>(AgentSettingsSource).toService(AgentTokens.LocalSettings);
  const eventLoop = new EventLoopDelayMonitor();
  c.bind<EventLoopDelayMonitor>(AgentTokens.EventLoop).toConstantValue(eventLoop);
  c.bind<AgentMetrics>(AgentTokens.Metrics).toConstantValue(new AgentMetrics({ scope: cfg.scope, name: cfg.name }, { eventLoop, process: new ProcessMetrics([]) }));
  c.bind<AgentMetricsSink>(AgentMetricsSink).toService(AgentTokens.Metrics);
  c.bind<EventLog>(EventLog).toDynamicValue(
    (ctx) =>
      new InMemoryEventLog({
        member: cfg.name,
        clock: ctx.get<Clock>(Clock),
        logger: ctx.get<Logger>(Logger).child({ component: 'events' }),
        capacity: cfg.restapi.event_history,
      }),
  );
  c.bind<CallbackRunner>(CallbackRunner).toDynamicValue((ctx) => {
    if (overrides.callbacks) return overrides.callbacks;
    const logger = ctx.get<Logger>(Logger).child({ component: 'callbacks' });
    const metrics = ctx.get<AgentMetrics>(AgentTokens.Metrics);
    const events = ctx.get<EventLog>(EventLog);
    return new ChildProcessCallbackRunner({
      commands: () => settings.local.db.callbacks,
      timeoutSeconds: () => settings.local.db.callback_timeout,
      scope: cfg.scope,
      logger,
      onFailure: (action, role, why) => {
        metrics.callbackFailed(action);
        events.emit('callback_failed', `callback ${action} (${role}) failed: ${why}`, { action, role });
      },
    });
  });
  c.bind<HookScripts>(HookScripts).toDynamicValue((ctx) => {
    if (overrides.hooks) return overrides.hooks;
    const metrics = ctx.get<AgentMetrics>(AgentTokens.Metrics);
    const events = ctx.get<EventLog>(EventLog);
    return new ChildProcessHookScripts({
      commands: () => ({ pre_promote: settings.local.db.pre_promote, before_stop: settings.local.db.before_stop, post_bootstrap: settings.local.bootstrap.post_bootstrap }),
      timeoutSeconds: () => settings.local.db.callback_timeout,
      callOf: (name) => (name === 'post_bootstrap' ? postBootstrapCall(settings.local) : {}),
      logger: ctx.get<Logger>(Logger).child({ component: 'callbacks' }),
      onFailure: (name, why) => {
        metrics.callbackFailed(name);
        events.emit('callback_failed', `${name} script failed: ${why}`, { action: name });
      },
    });
  });
  c.bind<HaLoop>(AgentTokens.HaLoop).to(HaLoop);
  c.bind<AgentControl>(AgentControl).toService(AgentTokens.HaLoop);

  // The API follows reloads of restapi.authentication, allowlist and http_extra_headers, the
  // members' hosts (allowlist_include_members) and the addresses of the host names among them.
  const names = new AllowlistNames(c.get<Logger>(Logger).child({ component: 'restapi' }));
  c.bind<AllowlistNames>(AgentTokens.AllowlistNames).toConstantValue(names);
  const memberApiUrls = () => c.get<AgentControl>(AgentControl).snapshot().cluster?.members.map((m) => m.apiUrl) ?? [];
  settings.onReload((next) => void names.follow(allowlistEntries(next, memberApiUrls)));
  const access = apiAccess(() => settings.local, names, memberApiUrls);
  c.bind<AgentApi>(AgentTokens.Api).toDynamicValue((ctx) =>
    createAgentApi({
      control: ctx.get<AgentControl>(AgentControl),
      // The API's reads and commands count their failed DCS calls (api_read, request_switchover, change_config, ...).
      store: new DcsErrorCountingStore(ctx.get<ClusterStore>(ClusterStore), ctx.get<AgentMetrics>(AgentTokens.Metrics), COMMAND_DCS_OPERATIONS),
      clock: ctx.get<Clock>(Clock),
      peers: ctx.get<PeerApi>(PeerApi),
      metrics: ctx.get<AgentMetrics>(AgentTokens.Metrics),
      logger: ctx.get<Logger>(Logger).child({ component: 'restapi' }),
      access,
      extraHeaders: () => settings.local.restapi.http_extra_headers,
      events: ctx.get<EventLog>(EventLog),
    }),
  );
  c.bind<AgentServer>(AgentTokens.Server).toDynamicValue((ctx) => {
    const tls = serverTlsOf(cfg.restapi);
    const server = createAgentServer(ctx.get<AgentApi>(AgentTokens.Api).callback(), { listen: cfg.restapi.listen, ...(tls ? { tls } : {}) });
    const logger = ctx.get<Logger>(Logger).child({ component: 'restapi' });
    onReloadReadFiles(settings, logger, 'the REST API certificate files could not be read again: the ones in force stay', (next) => {
      const renewed = serverTlsOf(next.restapi);
      if (!tls || !renewed) return;
      server.reloadTls(renewed);
      logger.info('REST API certificate files read again: new connections use them', { certfile: renewed.certfile });
    });
    return server;
  });
  return c;
}
