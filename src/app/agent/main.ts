import 'reflect-metadata';
import type { Container } from 'inversify';
import type { AgentServer } from '../../adapters/http/server.js';
import type { AllowlistNames } from '../../adapters/http/allowlist-names.js';
import { checkPostgresSetup } from '../../adapters/database/pg-preflight.js';
import { defaultRunAsUser } from '../../adapters/database/pg-options.js';
import { ClusterStore } from '../../ports/cluster-store.js';
import { Fencer } from '../../ports/fencer.js';
import { Logger } from '../../ports/logger.js';
import { PeerApi } from '../../ports/peer-api.js';
import { AgentTokens, createAgentContainer, type AgentAdapterOverrides } from './container.js';
import type { HaLoop } from './ha-loop.js';
import type { EventLoopDelayMonitor } from '../../adapters/metrics/event-loop-delay.js';
import { JsonLinesLogger } from '../../adapters/logger/json-lines-logger.js';
import { SystemdNotifier } from '../../adapters/service-manager/systemd-notifier.js';
import { runConfigProcess, loadConfigApart } from './config-client.js';
import { LocalConfigError, type LocalConfig } from './local-config-types.js';
import { svcVersion } from './package-version.js';
import { configWarnings } from './config-warnings.js';

export { svcVersion } from './package-version.js';

/** Loads the local configuration file (path, environment); throws LocalConfigError for an invalid one. */
export type LocalConfigLoader = (path: string, env: Readonly<Record<string, string | undefined>>) => Promise<LocalConfig>;

/** Reads the file in this process: loads the parser (yaml, ajv) on first use (tests, embedding). */
const loadInProcess: LocalConfigLoader = async (path, env) => (await import('./local-config.js')).loadLocalConfig(path, env);

import { EXIT_INVALID_CONFIG, EXIT_START_FAILED } from './exit-codes.js';

export { EXIT_INVALID_CONFIG, EXIT_START_FAILED } from './exit-codes.js';

/** A started agent: its container, HA loop and API listener. */
export interface RunningAgent {
  readonly container: Container;
  readonly loop: HaLoop;
  readonly server: AgentServer;
  readonly logger: Logger;
  /** `http(s)://host:port` of the API. */
  readonly url: string;
  /**
   * Clean shutdown: stops the HA loop, stops PostgreSQL (fast), releases the leader key
   * if held and revokes the lease, then closes the API and the DCS client. In maintenance
   * mode PostgreSQL is left running when that is safe (see HaLoop.stop).
   */
  stop(): Promise<void>;
}

/**
 * Loads the configuration file (unless given `config`, read from it already), builds the
 * container, starts the API listener and then the HA loop (the API answers from the first
 * moment, from the initial snapshot). Throws LocalConfigError for an invalid file, or for a
 * machine that cannot run the configured PostgreSQL. `loadConfig` reads the file again on a
 * reload (default: in this process).
 */
/** How long the start waits for the allowlist's host names to resolve. */
const ALLOWLIST_RESOLVE_WAIT_MS = 5000;

export async function startAgent(opts: {
  readonly configPath: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly overrides?: AgentAdapterOverrides;
  readonly config?: LocalConfig;
  readonly loadConfig?: LocalConfigLoader;
}): Promise<RunningAgent> {
  const env = opts.env ?? process.env;
  const loadConfig = opts.loadConfig ?? loadInProcess;
  const config = opts.config ?? (await loadConfig(opts.configPath, env));
  // A real PostgreSQL must be runnable before anything starts (an embedder's own database adapter checks itself).
  if (!opts.overrides?.database) {
    const problems = await checkPostgresSetup({ binDir: config.db.bin_dir, dataDir: config.db.data_dir, logDir: config.db.log_dir, runAsUser: defaultRunAsUser() });
    if (problems.length) throw new LocalConfigError(`${opts.configPath} (checked on this machine)`, problems);
  }
  const overrides = { logger: opts.overrides?.logger ?? loggerOf(config), ...opts.overrides };
  const container = createAgentContainer({ config, configPath: opts.configPath, svcVersion: svcVersion(), env, overrides, loadConfig });
  const logger = container.get<Logger>(Logger);
  const loop = container.get<HaLoop>(AgentTokens.HaLoop);
  const server = container.get<AgentServer>(AgentTokens.Server);
  const fencer = container.get<Fencer>(Fencer);
  const eventLoop = container.get<EventLoopDelayMonitor>(AgentTokens.EventLoop).start();
  for (const w of configWarnings(config, opts.configPath)) logger.warn(w);
  await fencer.attach();
  // The allowlist's host names resolve before the API serves (until then they allow nothing);
  // a resolver that does not answer holds the start back 5 s at most.
  const names = container.get<AllowlistNames>(AgentTokens.AllowlistNames);
  await Promise.race([names.follow(config.restapi.allowlist), new Promise((resolve) => setTimeout(resolve, ALLOWLIST_RESOLVE_WAIT_MS).unref())]);
  names.start();
  await server.listen();
  logger.info('REST API listening', { url: server.url() });
  loop.start();
  logger.info('HA loop started');
  let stopped: Promise<void> | null = null;
  return {
    container,
    loop,
    server,
    logger,
    url: server.url(),
    stop: () =>
      (stopped ??= (async () => {
        logger.info('shutting down: stopping the HA loop and the database');
        // In maintenance mode PostgreSQL is left running (under the fencer's guard for a primary).
        await loop.stop({ releaseLeader: true, stopDatabase: true, leaveRunningInPause: true });
        // PostgreSQL is down and the lock released, or the fencer took the lock over: either way the agent is done with it.
        await fencer.detach();
        await server.close();
        names.stop();
        eventLoop.stop();
        await container.get<ClusterStore>(ClusterStore).close();
        const peers = container.get<PeerApi>(PeerApi) as PeerApi & { close?: () => void };
        peers.close?.();
        logger.info('shutdown complete');
        await (logger as Logger & { flush?: () => Promise<void> }).flush?.();
      })()),
  };
}

/** The agent's logger, as the local file's `log` section asks (JSON or text, stdout or a file, levels per component). */
export function loggerOf(config: LocalConfig): JsonLinesLogger {
  return JsonLinesLogger.create({
    level: config.log.level,
    levels: config.log.levels,
    format: config.log.format,
    ...(config.log.file !== null ? { file: config.log.file } : {}),
    base: { scope: config.scope, name: config.name },
  });
}

/**
 * The `warden` command. Resolves with the exit code once the agent has stopped: 0 after a
 * clean shutdown (SIGTERM/SIGINT), 2 for invalid arguments or configuration (every problem
 * printed), 1 when the start failed. SIGHUP re-reads the configuration file; a second
 * SIGTERM exits at once without cleaning up.
 */
export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  // Arguments and the file are read by a short-lived process of their own: commander, yaml and
  // ajv never load here (see config-process.ts).
  let answer;
  try {
    answer = await runConfigProcess(['start', ...argv], env);
  } catch (e) {
    process.stderr.write(`warden: cannot start: the configuration could not be read: ${(e as Error).message}\n`);
    return EXIT_START_FAILED;
  }
  if (answer.kind === 'exit') {
    if (answer.stdout) process.stdout.write(answer.stdout);
    if (answer.stderr) process.stderr.write(answer.stderr);
    return answer.code;
  }
  if (answer.kind !== 'start') {
    process.stderr.write(`warden: cannot start: unexpected answer ${answer.kind} from the configuration process\n`);
    return EXIT_START_FAILED;
  }
  const { configPath, config } = answer;
  // Under systemd (Type=notify) the agent reports ready/reloading/stopping. The socket must not
  // reach PostgreSQL, which the agent starts: built with systemd support, it would report its
  // own start and stop as the service's.
  const notifier = new SystemdNotifier(env, (e) => process.stderr.write(`warden: could not notify systemd: ${e}\n`));
  delete process.env['NOTIFY_SOCKET'];

  let agent: RunningAgent;
  try {
    agent = await startAgent({ configPath, env, config, loadConfig: loadConfigApart });
  } catch (e) {
    if (e instanceof LocalConfigError) {
      process.stderr.write(`warden: ${e.message}\n`);
      return EXIT_INVALID_CONFIG;
    }
    process.stderr.write(`warden: cannot start: ${(e as Error).message}\n`);
    return EXIT_START_FAILED;
  }
  const { logger } = agent;
  void notifier.ready(`REST API on ${agent.url}; HA loop running`);
  process.on('unhandledRejection', (reason) => logger.error('unhandled promise rejection', { reason: String((reason as Error)?.stack ?? reason) }));
  process.on('SIGHUP', () => {
    // Also what logrotate sends: a log file moved away is reopened under its name.
    (logger as Logger & { reopen?: () => void }).reopen?.();
    logger.info('SIGHUP: re-reading the configuration file on the next loop');
    void notifier.reloading('re-reading the configuration file');
    agent.loop.requestReload();
    void notifier.ready(`REST API on ${agent.url}; HA loop running`);
  });
  return new Promise<number>((done) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn('second termination signal: exiting at once', { signal });
        process.exit(EXIT_START_FAILED);
      }
      stopping = true;
      logger.info('termination signal received', { signal });
      void notifier.stopping('stopping the HA loop and PostgreSQL');
      agent.stop().then(
        () => done(0),
        (err: unknown) => {
          logger.error('shutdown failed', { err: String((err as Error)?.stack ?? err) });
          done(EXIT_START_FAILED);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
