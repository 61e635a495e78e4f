import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { Watchdog } from '../../ports/watchdog.js';

/** What the fence keeper acts through. */
export interface FenceKeeperDeps {
  /** A monotonic clock: the lease is held as a duration from when the agent reported it. */
  readonly clock: Clock;
  readonly logger: Logger;
  /** The watchdog device (or a no-op one): armed while the agent asks for it, kicked while the lease is safe. */
  readonly watchdog: Watchdog;
  /** Stops PostgreSQL hard and checks that nothing accepts writes; true when it is down. Never throws. */
  stopDatabase(mode: 'immediate' | 'fast', reason: string): Promise<boolean>;
  /**
   * Makes the next start of the stopped server come up read-only until the agent decides its
   * role (standby.signal); bounded in time, never throws. Called before the stop of a primary.
   */
  holdReadOnly(): Promise<void>;
  /** Whether PostgreSQL runs as a primary now (false when it cannot tell). Never throws. */
  primaryRunning(): Promise<boolean>;
  /** Releases the leader lock the agent held (only while it still names this member). Never throws. */
  releaseLeader(): Promise<void>;
  /**
   * After a fence that stopped the server of a lock holder, before the lock may move: puts back
   * the sync key its agent replaced for a promotion the server never finished. Never throws.
   */
  readonly undoPromotion?: () => Promise<void>;
  /**
   * Whether etcd's leader key names this member (false when it cannot tell). Asked once a dead
   * agent's server is down, when that agent reported no lock: it may have died between taking
   * the key and telling the fencer. Never throws.
   */
  readonly leaderIsMine?: () => Promise<boolean>;
  /** This member's name: the holder etcd's leader key must show while a lock is guarded. */
  readonly member?: string;
  /**
   * Who etcd's leader key names now, by a read (null: nobody; undefined: cannot tell). Asked
   * before a fence for a key the watch showed lost, in case the watch was behind. Never throws.
   */
  readonly leaderHolder?: () => Promise<string | null | undefined>;
  /** Ms before the lease deadline at which PostgreSQL is stopped (`watchdog.safety_margin`). */
  readonly safetyMarginMs: number;
  /** Hears every fencing stop: why, how long it took, whether PostgreSQL is down. */
  readonly fenced?: (reason: string, durationMs: number, stopped: boolean) => void;
}

/**
 * How long etcd's leader key may show another holder or none, while the agent reports a lock,
 * before PostgreSQL is stopped: an agent that runs takes its key back or steps down within
 * moments. Well under the time the other members wait for a former leader's answer in a race
 * (2 s), so that a primary whose agent is frozen is down before they give up on it.
 */
export const KEY_LOST_GRACE_MS = 500;

/** What the keeper is doing, for its log and its agent. */
export type KeeperState = 'idle' | 'guarding' | 'fenced';

/**
 * The fencer's decisions, without I/O of its own: it keeps the lease deadline the agent
 * reported (as a deadline on its own monotonic clock), stops PostgreSQL when that deadline
 * minus the safety margin passes with no renewal, and stops it at once when the agent dies
 * (releasing the lock if the agent held it). Once it fenced, the fence holds: a primary that
 * comes back before the agent reports a new lock (a restart the agent had under way when it
 * froze, finishing after it thawed) is stopped again, and the fence of a primary leaves the
 * server's next start read-only, so that such a start does not make a second primary even for
 * the moment before the next check. The watchdog device is kicked only while a kick's
 * countdown ends within the lease: if this process hangs too, or cannot stop PostgreSQL, the
 * machine resets before the lock can move.
 */
export class FenceKeeper {
  private deadline: number | null = null;
  /** A deadline the agent reported while a fence was running: guarded once PostgreSQL is down. */
  private guardedDuringFence: number | null = null;
  private fencing: Promise<void> | null = null;
  private stateNow: KeeperState = 'idle';
  /** The guarded lock is one the agent left behind when it stopped with its server running (maintenance mode, or a failed stop). */
  private handedOver = false;
  /** The timeout the watchdog device was armed with (ms); null while it is not armed. */
  private watchdogTimeoutMs: number | null = null;
  /** When the guarded lock began (the first deadline after none). */
  private guardedSince: number | null = null;
  /** Who etcd's leader key named at its last change the watch showed, and when; null: not known (no change seen, or the watch reconnected). */
  private keyHolder: { readonly name: string | null; readonly at: number } | null = null;
  /** A read of the leader key is in flight (checks run every 100 ms; a slow etcd must not pile reads up). */
  private readingKey = false;
  /** When a read of the key last could not tell who holds it: asked again only KEY_LOST_GRACE_MS later. */
  private keyUnreadAt: number | null = null;

  constructor(private readonly deps: FenceKeeperDeps) {}

  /** The keeper's state. */
  get state(): KeeperState {
    return this.stateNow;
  }

  /** The agent holds the lock for another `remainingMs`. */
  guard(remainingMs: number): void {
    const next = this.deps.clock.now() + Math.max(0, remainingMs);
    // The fence under way finishes first (the stop is already sent); the agent sends a guard
    // only when its deadline changes, so dropping this one would leave the new lock unguarded
    // and the fence latched against the primary the lock holder starts next.
    if (this.fencing) {
      this.guardedDuringFence = next;
      return;
    }
    if (this.deadline === null) {
      this.deps.logger.info('guarding the leader lease', { remaining_ms: Math.round(remainingMs) });
      this.guardedSince = this.deps.clock.now();
    }
    this.deadline = next;
    this.handedOver = false;
    this.stateNow = 'guarding';
  }

  /** The agent does not hold the lock any more (a fence that fired keeps holding: only a new lock lifts it). */
  unguard(): void {
    this.guardedDuringFence = null;
    if (this.deadline !== null) this.deps.logger.info('the agent gave the leader lease up: not guarding');
    this.deadline = null;
    this.guardedSince = null;
    this.handedOver = false;
    if (this.stateNow === 'guarding') this.stateNow = 'idle';
  }

  /**
   * etcd's watch showed the leader key change: deleted (null) or put naming `holder`. While a
   * lock is guarded and the key names another member or none for KEY_LOST_GRACE_MS, the lock is
   * gone in etcd before its deadline (its lease revoked early: by an operator, or by an etcd
   * raft leader that resumed after a freeze and revoked every lease it counted as expired) and
   * the agent neither took the key back nor stepped down: it may be frozen, and the other
   * members may promote. PostgreSQL is stopped then, once a read confirms the key is not this
   * member's.
   */
  leaderKeyChanged(holder: string | null): void {
    this.keyHolder = { name: holder, at: this.deps.clock.now() };
  }

  /** The watch reconnected: changes may have been missed, so the key's holder is not known until the next one. */
  leaderKeyUnknown(): void {
    this.keyHolder = null;
  }

  /** The device was armed with `timeoutSeconds` (null: disarmed); kicks are bounded by it. */
  watchdogArmed(timeoutSeconds: number | null): void {
    this.watchdogTimeoutMs = timeoutSeconds === null ? null : timeoutSeconds * 1000;
  }

  /** Checks the deadline and keeps the device alive; call often (every 100 ms or so). */
  async check(): Promise<void> {
    if (this.fencing) return this.fencing;
    const d = this.deadline;
    if (d === null) {
      // A guard may arrive while the server is read: a primary started under that new lock is not fenced.
      if (this.stateNow === 'fenced' && (await this.deps.primaryRunning()) && this.deadline === null && !this.fencing) {
        await this.fence('immediate', 'PostgreSQL came back as a primary after it was fenced, before the agent held the leader lock again', false, true);
      }
      return;
    }
    const now = this.deps.clock.now();
    if (now >= d - this.deps.safetyMarginMs) {
      const ends = `the leader lease ends in ${Math.max(0, Math.round((d - now) / 1000))} s`;
      if (this.handedOver) return this.fenceLeftRunning(`${ends} and no agent for this node started again to renew the lock its agent left running when it stopped`);
      await this.fence('immediate', `${ends} and the agent did not renew it in time (frozen, cut off from etcd, or etcd answers too slowly for the ttl)`, false, true);
      return;
    }
    const lost = await this.keyLost(now);
    if (lost !== null && this.deadline !== null && !this.fencing) {
      if (this.handedOver) return this.fenceLeftRunning(lost);
      await this.fence('immediate', lost, false, true);
      return;
    }
    // A kick now resets the machine at now + the device's timeout at the latest: kick only while
    // that falls within the lease, so that a fencer that hangs, or cannot stop PostgreSQL, has
    // the machine reset before the lock can move (a kick up to the fence's own moment would
    // reset it a whole timeout after the lock expired). The agent's kick at each renewal, and
    // this one after it, keep a healthy primary's device alive.
    const timeout = this.watchdogTimeoutMs;
    if (this.deps.watchdog.isActive && timeout !== null && now + timeout <= d) await this.deps.watchdog.keepalive();
  }

  /**
   * Why the guarded lock is gone in etcd (see leaderKeyChanged), or null: the key has shown
   * another holder or none since a change seen while guarding, for the grace, and a read agrees.
   */
  private async keyLost(now: number): Promise<string | null> {
    const { member, leaderHolder } = this.deps;
    const k = this.keyHolder;
    if (member === undefined || leaderHolder === undefined || k === null || k.name === member) return null;
    // A change seen before this lock began is the key's state before this agent took it (the agent's own put may not have been shown yet).
    if (this.guardedSince === null || k.at < this.guardedSince || now - k.at < KEY_LOST_GRACE_MS) return null;
    if (this.readingKey || (this.keyUnreadAt !== null && now - this.keyUnreadAt < KEY_LOST_GRACE_MS)) return null;
    this.readingKey = true;
    let holder: string | null | undefined;
    try {
      holder = await leaderHolder();
    } finally {
      this.readingKey = false;
    }
    this.keyUnreadAt = holder === undefined ? this.deps.clock.now() : null;
    // The watch may have been behind, or etcd does not answer: the deadline still stops the server in time.
    if (holder === undefined || holder === member || this.keyHolder !== k) {
      if (holder === member && this.keyHolder === k) this.keyHolder = { name: member, at: this.deps.clock.now() };
      return null;
    }
    const where = holder === null ? 'is gone from etcd' : `names ${holder}`;
    return `the leader key ${where} for ${Math.round((this.deps.clock.now() - k.at) / 1000 * 10) / 10} s while the agent holds its lock (its lease was revoked before its time, or the key deleted), and the agent neither took it back nor stepped down (frozen?): the other members may promote`;
  }

  /** The agent process is gone without saying goodbye: stop PostgreSQL now, and release the lock it held. */
  async agentDied(): Promise<void> {
    if (this.fencing) return this.fencing;
    const held = this.deadline !== null;
    // A replica's start needs no hold (it has its standby.signal); a primary's does, lock or not.
    const hold = held || (await this.deps.primaryRunning());
    if (this.fencing) return this.fencing;
    await this.fence(held ? 'immediate' : 'fast', held ? 'the agent died while holding the leader lock' : 'the agent died', held, hold, !held);
  }

  /** Ms left of the guarded lease on the keeper's clock, or null when it guards none. */
  get remainingMs(): number | null {
    return this.deadline === null ? null : Math.max(0, this.deadline - this.deps.clock.now());
  }

  /**
   * The fencer itself is told to stop while it guards a lock that no agent watches (its agent
   * left the primary running): the primary is stopped first, since nothing would stop it
   * before its lock moves on. Nothing happens when no deadline is guarded.
   */
  async stopGuarding(why: string): Promise<void> {
    if (this.fencing) return this.fencing;
    if (this.deadline === null) return;
    await this.fenceLeftRunning(why);
  }

  /** Fences a server its agent left running: held read-only only when it runs as a primary (one the operator stopped since is left as it is, with nothing in the way of pg_upgrade). */
  private async fenceLeftRunning(why: string): Promise<void> {
    const hold = await this.deps.primaryRunning();
    if (this.fencing) return this.fencing;
    await this.fence('immediate', why, false, hold);
  }

  /**
   * The agent stops and leaves its server running (maintenance mode): the lock it holds stays
   * guarded without it, until an agent reports a new deadline. When the deadline passes, a
   * primary still running is stopped (and held read-only) as usual; a server someone stopped
   * meanwhile is left as it is. False when no deadline is guarded (nothing to hand over).
   */
  handover(): boolean {
    if (this.deadline === null || this.fencing) return false;
    this.handedOver = true;
    return true;
  }

  /** The agent stops cleanly: nothing to fence; the device is disarmed. */
  async detach(): Promise<void> {
    this.deadline = null;
    this.guardedSince = null;
    this.handedOver = false;
    this.stateNow = 'idle';
    await this.deps.watchdog.disable();
    this.watchdogTimeoutMs = null;
  }

  /** `askStore`: a dead agent that reported no lock; once its server is down, etcd says whether it held one all the same. */
  private fence(mode: 'immediate' | 'fast', why: string, release: boolean, hold: boolean, askStore = false): Promise<void> {
    const guarded = this.deadline !== null;
    this.fencing = (async () => {
      const { logger, watchdog } = this.deps;
      logger.warn(`fencing: stopping PostgreSQL (${mode}): ${why}`);
      const startedAt = this.deps.clock.now();
      if (hold) await this.deps.holdReadOnly();
      const stopped = await this.deps.stopDatabase(mode, why);
      this.deps.fenced?.(why, this.deps.clock.now() - startedAt, stopped);
      this.deadline = null;
      this.guardedSince = null;
      this.handedOver = false;
      this.stateNow = 'fenced';
      const renewed = this.guardedDuringFence;
      this.guardedDuringFence = null;
      if (!stopped) {
        // Nothing else stops this primary: let the watchdog reset the machine before the lock moves on.
        logger.error('fencing failed: PostgreSQL may still accept writes; the watchdog (if armed) is no longer kicked');
        return;
      }
      logger.warn('fenced: PostgreSQL is down and nothing accepts writes');
      await watchdog.disable();
      this.watchdogTimeoutMs = null;
      if (renewed !== null && this.deadline === null) {
        // The agent holds a lock again (renewed late, or a restarted agent took it): guard it as usual.
        this.deadline = renewed;
        this.guardedSince = this.deps.clock.now();
        this.stateNow = 'guarding';
        logger.info('the agent reported a lock deadline during the fence: guarding it', { remaining_ms: Math.round(renewed - this.deps.clock.now()) });
      }
      // A lock reported during the fence is the member's again (a restarted agent took it): not released.
      const unreported = askStore && renewed === null && (await this.deps.leaderIsMine?.()) === true && this.deadline === null;
      if (unreported) logger.warn('the dead agent held the leader lock it had not reported yet (it died as it took it)');
      if ((guarded || unreported) && renewed === null) await this.deps.undoPromotion?.();
      if ((release || unreported) && renewed === null) {
        await this.deps.releaseLeader();
        logger.warn('released the leader lock the dead agent held: failover can start now');
      }
    })().finally(() => {
      this.fencing = null;
    });
    return this.fencing;
  }
}
