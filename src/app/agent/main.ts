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
import { loadLocalConfig, LocalConfigError } from './local-config.js';

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
  const container = createAgentContainer({ config, configPath: opts.configPath, svcVersion: svcVersion(), env, overrides: opts.overrides });
  const logger = container.get<Logger>(Logger);
  const loop = container.get<HaLoop>(AgentTokens.HaLoop);
  const server = container.get<AgentServer>(AgentTokens.Server);
  const fencer = container.get<Fencer>(Fencer);
  await fencer.attach();
  await server.listen();
  logger.info('REST API listening', { url: server.url() });
  loop.start();
  logger.info('HA loop started', { scope: config.scope, name: config.name });
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
        await container.get<ClusterStore>(ClusterStore).close();
        const peers = container.get<PeerApi>(PeerApi) as PeerApi & { close?: () => void };
        peers.close?.();
        logger.info('stopped');
        await (logger as Logger & { flush?: () => Promise<void> }).flush?.();
      })()),
  };
}

/** The config path from `warden -c node.yml` or `warden node.yml`; null after --help/--version. */
export function parseArgs(argv: readonly string[], version: string): string | null {
  const program = new Command('warden')
    .description('Warden agent: high availability for one PostgreSQL node')
    .version(version)
    .option('-c, --config <file>', 'local YAML configuration file')
    .argument('[config]', 'local YAML configuration file (same as -c)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError && (e.code === 'commander.helpDisplayed' || e.code === 'commander.version')) return null;
    throw e;
  }
  const path = (program.opts<{ config?: string }>().config ?? program.args[0]) as string | undefined;
  if (!path) throw new CommanderError(EXIT_INVALID_CONFIG, 'warden.noConfig', 'a configuration file is required: warden -c node.yml');
  return path;
}

/**
 * The `warden` command. Resolves with the exit code once the agent has stopped: 0 after a
 * clean shutdown (SIGTERM/SIGINT), 2 for invalid arguments or configuration (every problem
 * printed), 1 when the start failed. SIGHUP re-reads the configuration file; a second
 * SIGTERM exits at once without cleaning up.
 */
export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  let configPath: string | null;
  try {
    configPath = parseArgs(argv, svcVersion());
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'warden.noConfig') process.stderr.write(`warden: ${e.message}\n`);
      return EXIT_INVALID_CONFIG;
    }
    throw e;
  }
  if (configPath === null) return 0;

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
  process.on('unhandledRejection', (reason) => logger.error('unhandled promise rejection', { reason: String((reason as Error)?.stack ?? reason) }));
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: re-reading the configuration file');
    agent.loop.requestReload();
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
