import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import type { Container } from 'inversify';
import type { AgentServer } from '../../adapters/http/server.js';
import { checkPostgresSetup } from '../../adapters/database/pg-preflight.js';
import { defaultRunAsUser } from '../../adapters/database/pg-options.js';
import { ClusterStore } from '../../ports/cluster-store.js';
import { Fencer } from '../../ports/fencer.js';
import { Logger } from '../../ports/logger.js';
import { PeerApi } from '../../ports/peer-api.js';
import { AgentTokens, createAgentContainer, type AgentAdapterOverrides } from './container.js';
import type { HaLoop } from './ha-loop.js';
import type { EventLoopDelayMonitor } from '../../adapters/metrics/event-loop-delay.js';
import { PinoLogger } from '../../adapters/logger/pino-logger.js';
import { SystemdNotifier } from '../../adapters/service-manager/systemd-notifier.js';
import { effectiveConfigYaml, hostProblems } from './local-config-checks.js';
import { loadLocalConfig, LocalConfigError, type LocalConfig } from './local-config.js';

/** Exit code of an invalid configuration file or invalid arguments. */
export const EXIT_INVALID_CONFIG = 2;
/** Exit code of a start that failed for another reason (port taken, unreadable certificate...). */
export const EXIT_START_FAILED = 1;

/** Package root: the same depth from src/app/agent and dist/app/agent. */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** The agent's version, from package.json. */
export function svcVersion(): string {
  try {
    return String((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version?: unknown }).version ?? '0.0.0');
  } catch {
    return '0.0.0';
  }
}

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
   * if held and revokes the lease, then closes the API and the DCS client.
   */
  stop(): Promise<void>;
}

/**
 * Loads the configuration file, builds the container, starts the API listener and then the
 * HA loop (the API answers from the first moment, from the initial snapshot). Throws
 * LocalConfigError for an invalid file, or for a machine that cannot run the configured PostgreSQL.
 */
export async function startAgent(opts: {
  readonly configPath: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly overrides?: AgentAdapterOverrides;
}): Promise<RunningAgent> {
  const env = opts.env ?? process.env;
  const config = await loadLocalConfig(opts.configPath, env);
  // A real PostgreSQL must be runnable before anything starts (an embedder's own database adapter checks itself).
  if (!opts.overrides?.database) {
    const problems = await checkPostgresSetup({ binDir: config.db.bin_dir, dataDir: config.db.data_dir, logDir: config.db.log_dir, runAsUser: defaultRunAsUser() });
    if (problems.length) throw new LocalConfigError(`${opts.configPath} (checked on this machine)`, problems);
  }
  const overrides = { logger: opts.overrides?.logger ?? loggerOf(config), ...opts.overrides };
  const container = createAgentContainer({ config, configPath: opts.configPath, svcVersion: svcVersion(), env, overrides });
  const logger = container.get<Logger>(Logger);
  const loop = container.get<HaLoop>(AgentTokens.HaLoop);
  const server = container.get<AgentServer>(AgentTokens.Server);
  const fencer = container.get<Fencer>(Fencer);
  const eventLoop = container.get<EventLoopDelayMonitor>(AgentTokens.EventLoop).start();
  await fencer.attach();
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
        await loop.stop({ releaseLeader: true, stopDatabase: true });
        // PostgreSQL is down and the lock released: the fencer has nothing left to guard.
        await fencer.detach();
        await server.close();
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
export function loggerOf(config: LocalConfig): PinoLogger {
  return PinoLogger.create({
    level: config.log.level,
    levels: config.log.levels,
    format: config.log.format,
    ...(config.log.file !== null ? { file: config.log.file } : {}),
    base: { scope: config.scope, name: config.name },
  });
}

/** What the command line asks for. */
export interface AgentArgs {
  readonly configPath: string;
  /** `--validate-config`: check the file (and this host) and exit. */
  readonly validate: boolean;
  /** `--print`: with `--validate-config`, also print the effective configuration. */
  readonly print: boolean;
}

/** The config path from `warden -c node.yml` or `warden node.yml`; null after --help/--version. */
export function parseArgs(argv: readonly string[], version: string): string | null {
  return parseAgentArgs(argv, version)?.configPath ?? null;
}

/** The arguments of `warden [--validate-config [--print]] -c node.yml` (or `warden node.yml`); null after --help/--version. */
export function parseAgentArgs(argv: readonly string[], version: string): AgentArgs | null {
  const program = new Command('warden')
    .description('Warden agent: high availability for one PostgreSQL node')
    .version(`warden ${version}`, '-V, --version', 'print the version')
    .option('-c, --config <file>', 'local YAML configuration file')
    .option('--validate-config', 'check the configuration file and this host, list every problem, and exit (0: valid, 1: invalid)')
    .option('--print', 'with --validate-config: print the effective configuration (defaults and environment applied, passwords masked)')
    .argument('[config]', 'local YAML configuration file (same as -c)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError && (e.code === 'commander.helpDisplayed' || e.code === 'commander.version')) return null;
    throw e;
  }
  const opts = program.opts<{ config?: string; validateConfig?: boolean; print?: boolean }>();
  const path = (opts.config ?? program.args[0]) as string | undefined;
  if (!path) throw new CommanderError(EXIT_INVALID_CONFIG, 'warden.noConfig', 'a configuration file is required: warden -c node.yml');
  if (opts.print && !opts.validateConfig) throw new CommanderError(EXIT_INVALID_CONFIG, 'warden.noConfig', '--print goes with --validate-config');
  return { configPath: path, validate: !!opts.validateConfig, print: !!opts.print };
}

/**
 * `warden --validate-config [--print]`: the file as the agent would read it (environment
 * overrides included), then this host (TLS files, PostgreSQL programs, directories).
 * Every problem is listed; exit 0 when there is none, 1 otherwise.
 */
export async function validateConfigCommand(configPath: string, print: boolean, env: Readonly<Record<string, string | undefined>>): Promise<number> {
  let config: LocalConfig;
  try {
    config = await loadLocalConfig(configPath, env);
  } catch (e) {
    if (!(e instanceof LocalConfigError)) throw e;
    process.stderr.write(`warden: ${e.message}\n`);
    return 1;
  }
  const problems = await hostProblems(config);
  if (print) process.stdout.write(effectiveConfigYaml(config));
  if (problems.length) {
    process.stderr.write(`warden: ${new LocalConfigError(configPath, problems).message}\n`);
    return 1;
  }
  process.stderr.write(`warden: ${configPath} is valid\n`);
  return 0;
}

/**
 * The `warden` command. Resolves with the exit code once the agent has stopped: 0 after a
 * clean shutdown (SIGTERM/SIGINT), 2 for invalid arguments or configuration (every problem
 * printed), 1 when the start failed. SIGHUP re-reads the configuration file; a second
 * SIGTERM exits at once without cleaning up.
 */
export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  let args: AgentArgs | null;
  try {
    args = parseAgentArgs(argv, svcVersion());
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'warden.noConfig') process.stderr.write(`warden: ${e.message}\n`);
      return EXIT_INVALID_CONFIG;
    }
    throw e;
  }
  if (args === null) return 0;
  if (args.validate) return validateConfigCommand(args.configPath, args.print, env);
  const { configPath } = args;
  // Under systemd (Type=notify) the agent reports ready/reloading/stopping. The socket must not
  // reach PostgreSQL, which the agent starts: built with systemd support, it would report its
  // own start and stop as the service's.
  const notifier = new SystemdNotifier(env, (e) => process.stderr.write(`warden: could not notify systemd: ${e}\n`));
  delete process.env['NOTIFY_SOCKET'];

  let agent: RunningAgent;
  try {
    agent = await startAgent({ configPath, env });
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
