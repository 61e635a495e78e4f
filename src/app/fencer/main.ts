import 'reflect-metadata';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { Command, CommanderError } from 'commander';
import { MonotonicClock } from '../../adapters/clock/monotonic-clock.js';
import { SystemClock } from '../../adapters/clock/system-clock.js';
import { Etcd3GatewayClusterStore } from '../../adapters/cluster-store/etcd3-gateway-cluster-store.js';
import { PgFence } from '../../adapters/database/pg-fence.js';
import { defaultRunAsUser } from '../../adapters/database/pg-options.js';
import { defaultFencerSocket, ensurePrivateSocketDir } from '../../adapters/fencer/fencer-socket-path.js';
import { FencerSocketServer } from '../../adapters/fencer/fencer-socket-server.js';
import { JsonLinesLogger } from '../../adapters/logger/json-lines-logger.js';
import { LinuxWatchdog } from '../../adapters/watchdog/linux-watchdog.js';
import { NoopWatchdog } from '../../adapters/watchdog/noop-watchdog.js';
import { loadLocalConfig, LocalConfigError } from '../agent/local-config.js';
import type { LocalConfig } from '../agent/local-config-types.js';
import type { Logger } from '../../ports/logger.js';
import { etcd3ConnectionOf, etcd3CredentialsOf, etcd3CredentialsReloadable } from '../agent/etcd3-connection.js';
import { RepeatedFailures } from '../agent/repeated-failures.js';
import { FenceKeeper } from './fence-keeper.js';
import { undoUnfinishedPromotion } from './promotion-undo.js';

/** How long a fencer waits for an agent to attach (at start, and after its agent died) before it leaves. */
const ADOPTION_WINDOW_MS = 30_000;

/** How often the lease deadline is checked and the device kicked. */
const CHECK_MS = 100;

/**
 * The `warden-fencer` process: started by the agent with the agent's configuration file, it
 * guards that node's PostgreSQL while the agent holds the leader lock, and outlives the agent
 * (see FenceKeeper for what it does). Exits 0 when another fencer already guards the data
 * directory, when its agent stopped cleanly, or when no agent attaches within the adoption
 * window; 2 for an invalid configuration.
 */
export async function main(argv: readonly string[]): Promise<number> {
  const program = new Command('warden-fencer')
    .description("Warden's fencer: stops PostgreSQL when the agent cannot (started by the agent)")
    .requiredOption('-c, --config <file>', "the agent's local YAML configuration file")
    .option('--socket <path>', 'Unix socket to listen on (default: from the configuration)')
    .exitOverride();
  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    return e instanceof CommanderError && e.code === 'commander.helpDisplayed' ? 0 : 2;
  }
  const opts = program.opts<{ config: string; socket?: string }>();
  let cfg;
  try {
    cfg = await loadLocalConfig(opts.config, process.env);
  } catch (e) {
    process.stderr.write(`warden-fencer: ${e instanceof LocalConfigError ? e.message : (e as Error).message}\n`);
    return 2;
  }
  const logger = JsonLinesLogger.create({ level: cfg.log.level, base: { scope: cfg.scope, name: cfg.name, component: 'fencer' } });
  const socketPath = opts.socket ?? cfg.fencer.socket ?? defaultFencerSocket(cfg.scope, cfg.name, cfg.db.data_dir);
  const store = new Etcd3GatewayClusterStore({ clock: new SystemClock(), logger, ...etcd3ConnectionOf(cfg) });
  const fence = new PgFence(cfg.db.data_dir, logger, defaultRunAsUser());
  const watchdog = cfg.watchdog.mode === 'off' ? new NoopWatchdog() : new LinuxWatchdog({ device: cfg.watchdog.device });
  const monotonic = new MonotonicClock();
  let lastFence: { reason: string; durationMs: number; stopped: boolean; at: number } | null = null;
  // Reads of the leader key repeat every half second while etcd does not answer: said once, reminded rarely.
  const readFailures = new RepeatedFailures(logger, monotonic);
  const keeper = new FenceKeeper({
    clock: monotonic,
    fenced: (reason, durationMs, stopped) => {
      lastFence = { reason, durationMs, stopped, at: monotonic.now() };
      // A frozen agent is still attached: it reads this when it runs again.
      server.reportFence({ reason, durationMs, stopped, agoMs: 0 });
      // An agent that left its primary running did not come back in time.
      if (!server.hasAgent) leaveUnlessAdopted('fenced the primary its agent left running');
    },
    logger,
    watchdog,
    safetyMarginMs: cfg.watchdog.safety_margin * 1000,
    stopDatabase: (mode) => fence.stop(mode),
    holdReadOnly: () => fence.holdReadOnly(),
    primaryRunning: () => fence.primaryRunning(),
    member: cfg.name,
    leaderHolder: async () => {
      await takeRenewedEtcdCredentials(opts.config, cfg, store, logger);
      const what = 'could not read whether the leader key still names this member (the lock deadline still applies)';
      try {
        const holder = (await store.read()).leader?.name ?? null;
        readFailures.succeeded(what, 'the leader key can be read again');
        return holder;
      } catch (error) {
        readFailures.failed(what, (error as Error).message);
        return undefined;
      }
    },
    leaderIsMine: async () => {
      // An agent attached since (restarted) may have taken the key itself: it is its own.
      if (server.hasAgent) return false;
      await takeRenewedEtcdCredentials(opts.config, cfg, store, logger);
      try {
        return (await store.read()).leader?.name === cfg.name;
      } catch (error) {
        logger.warn('could not read whether the dead agent held the leader lock (it expires with its lease if it did)', { error: (error as Error).message });
        return false;
      }
    },
    undoPromotion: async () => {
      await takeRenewedEtcdCredentials(opts.config, cfg, store, logger);
      await undoUnfinishedPromotion(store, cfg.name, () => fence.stoppedServer(), logger);
    },
    releaseLeader: async () => {
      // The fencer may have run for months: etcd's client certificate (or the etcd password) may have been renewed since.
      await takeRenewedEtcdCredentials(opts.config, cfg, store, logger);
      try {
        await store.releaseLeader(cfg.name);
      } catch (error) {
        logger.error('could not release the leader lock (it expires with its lease)', { error: (error as Error).message });
      }
    },
  });

  let leaveTimer: NodeJS.Timeout | undefined;
  let finish: (code: number) => void = () => {};
  const finished = new Promise<number>((r) => (finish = r));
  const leaveUnlessAdopted = (why: string) => {
    clearTimeout(leaveTimer);
    leaveTimer = setTimeout(() => {
      if (!server.hasAgent) {
        logger.info(`leaving: ${why}, and no agent attached within ${ADOPTION_WINDOW_MS / 1000} s`);
        finish(0);
      }
    }, ADOPTION_WINDOW_MS);
  };
  const server = new FencerSocketServer(socketPath, cfg.db.data_dir, {
    guard: (ms) => keeper.guard(ms),
    unguard: () => keeper.unguard(),
    arm: async (t) => {
      const wasActive = watchdog.isActive;
      const ok = await watchdog.activate(t);
      // An armed device keeps the timeout it was armed with until it is disarmed.
      if (ok && !wasActive) keeper.watchdogArmed(t);
      return ok;
    },
    kick: () => watchdog.keepalive(),
    disarm: async () => {
      await watchdog.disable();
      keeper.watchdogArmed(null);
      return true;
    },
    usable: () => watchdog.isUsable(),
    bye: async () => {
      await keeper.detach();
      logger.info('the agent stopped cleanly: leaving');
      setTimeout(() => finish(0), 50);
    },
    handover: async () => {
      const remaining = keeper.remainingMs;
      if (remaining === null || !keeper.handover()) {
        await keeper.detach();
        logger.info('the agent stopped and no leader lock is guarded: leaving');
        setTimeout(() => finish(0), 50);
        return false;
      }
      logger.warn(
        `the agent stopped and left its primary running (maintenance mode, or a stop that failed): guarding its leader lock without it; PostgreSQL is stopped in ${Math.max(0, Math.round((remaining - cfg.watchdog.safety_margin * 1000) / 1000))} s unless an agent for this node starts and renews the lock`,
        { remaining_ms: Math.round(remaining) },
      );
      return true;
    },
    attached: (pid, adopted) => {
      clearTimeout(leaveTimer);
      logger.info(adopted ? 'a restarted agent adopted this fencer' : 'agent attached', { agent_pid: pid, socket: socketPath });
    },
    lastFence: () => (lastFence ? { reason: lastFence.reason, durationMs: lastFence.durationMs, stopped: lastFence.stopped, agoMs: Math.max(0, monotonic.now() - lastFence.at) } : null),
    agentGone: (pid) => {
      logger.warn('the agent died without stopping cleanly', { agent_pid: pid });
      void keeper.agentDied().then(() => leaveUnlessAdopted('the agent died'));
    },
  }, logger);
  try {
    ensurePrivateSocketDir(socketPath);
  } catch (e) {
    logger.error("the socket's folder is not private: leaving", { socket: socketPath, error: (e as Error).message });
    await store.close();
    return 1;
  }
  const listening = await server.listen();
  if (listening === 'guarded') {
    logger.info('another fencer already guards this data directory: leaving', { socket: socketPath });
    await store.close();
    return 0;
  }
  if (listening !== 'listening') {
    // Not another fencer: the agent would run unguarded, so it must hear why.
    logger.error('cannot listen on the fencer socket: leaving', { socket: socketPath, error: listening.error });
    await store.close();
    return 1;
  }
  const pidFile = `${socketPath}.pid`;
  // A new file, never through a link left in its place.
  await unlink(pidFile).catch(() => undefined);
  await writeFile(pidFile, `${process.pid}\n`, { flag: 'wx', mode: 0o644 }).catch(() => undefined);
  logger.info('fencer listening', { socket: socketPath, data_dir: cfg.db.data_dir, pid: process.pid });
  leaveUnlessAdopted('started');
  // The leader key as etcd's watch shows it: a lock revoked before its deadline stops a primary whose agent does not act.
  const unwatch = store.watchLeader((change) => {
    if (change.kind === 'leader') keeper.leaderKeyChanged(change.holder);
    else if (change.kind === 'resync') keeper.leaderKeyUnknown();
  });
  const checker = setInterval(() => void keeper.check(), CHECK_MS);
  const onSignal = () => {
    // Without its agent nothing else would stop this primary before its lock moves on.
    if (keeper.state === 'guarding' && !server.hasAgent) {
      void keeper.stopGuarding('the fencer was told to stop while it guarded a primary its agent left running').finally(() => finish(0));
    } else finish(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const code = await finished;
  clearInterval(checker);
  unwatch();
  clearTimeout(leaveTimer);
  await server.close();
  // Only its own: a fencer started after this one closed its socket has written its PID there.
  if ((await readFile(pidFile, 'utf8').catch(() => '')).trim() === String(process.pid)) await unlink(pidFile).catch(() => undefined);
  await store.close();
  await logger.flush();
  return code;
}

/**
 * Reads the configuration file again and takes its etcd credentials (certificate files read
 * again, the etcd user) when it reaches etcd the same way; anything that fails leaves the
 * ones in force (the release is tried with them). Never throws.
 */
async function takeRenewedEtcdCredentials(path: string, started: LocalConfig, store: Etcd3GatewayClusterStore, logger: Logger): Promise<void> {
  try {
    const now = await loadLocalConfig(path, process.env);
    if (etcd3CredentialsReloadable(started, now)) store.reloadCredentials(etcd3CredentialsOf(now));
  } catch (e) {
    logger.warn('could not take etcd credentials from the configuration file again: releasing with the ones read at start', { error: e instanceof Error ? e.message : String(e) });
  }
}
