import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import { compareRevisions, maxRevision, type ChangesSince, type KeyValueStore, type WatchInfo } from './key-value.js';
import type { DcsEntry, DcsSnapshot } from './keys.js';

/** One key as the copy knows it; a deleted key stays as a tombstone (value null) until a full read passes its revision. */
interface Known {
  readonly value: string | null;
  readonly revision: string;
  readonly lease: string | null;
}

/**
 * Progress requests left unanswered in a row (on a live watch) before the copy stops asking
 * for a while and reads in full instead: something between the agent and etcd (a proxy that
 * holds a request body back until it ends) may never let one through, and each costs a wait.
 */
const MISSES_BEFORE_PAUSE = 3;
const CONFIRM_PAUSE_MS = 60_000;

/** How long the first full read waits for the watch's first stream (later ones never wait). */
const FIRST_STREAM_WAIT_MS = 1000;
/** A confirmation asked for at most this long before another serves it too (both want the store as of the same moment). */
const SHARED_CONFIRMATION_MS = 50;

/** The moment the copy was last known to equal the store, and the store revision it equalled. */
export interface Confirmation {
  /** Epoch ms (store clock) just before the confirmation was asked for. */
  readonly at: number;
  readonly revision: string;
}

/**
 * A copy of every key under the cluster prefix, kept current by one watch of the key-value
 * store: the agent reads the cluster from it instead of reading the whole prefix from etcd
 * every tick. The copy is trusted only while it is *live*: filled by a full read since the
 * watch last (re)connected (a watch that reconnects may have missed changes). A caller that
 * needs a current view asks for a *confirmation*: the store's watch progress answers once
 * every change up to the store's present revision was delivered, so the copy then equals
 * the store as of that moment, without a read. Each key keeps its newest revision, so a
 * full read and the events delivered meanwhile merge in any order.
 *
 * Where the store's progress answers may overtake changes (etcd before 3.4.31 / 3.5.13), an
 * answer confirms the copy only when the store has not moved past the revision the copy is
 * known to be complete to; otherwise one small read of the keys changed since then (with the
 * store's key count, which reveals deletions) brings it current, and only a copy that lost a
 * key that way is read in full.
 */
export class WatchedPrefix {
  private readonly known = new Map<string, Known>();
  private live = false;
  /** Bumped by every (re)connect of the watch: a load or confirmation begun before it proves nothing. */
  private generation = 0;
  /** Bumped by every change applied to the copy. */
  private version = 0;
  private snapshotOf: { readonly version: number; readonly snapshot: DcsSnapshot } | null = null;
  private confirmedAt: Confirmation | null = null;
  /** The confirmation on its way, if any. */
  private confirming: { readonly at: number; readonly minRevision: string; readonly done: Promise<boolean> } | null = null;
  private unwatch: (() => void) | null = null;
  /** The revision the watch's stream started at (it reports every change after it); null until a stream reported its start. */
  private watchFrom: string | null = null;
  /** The revision of the newest full read. */
  private loadedRevision: string | null = null;
  /** The highest store revision the copy has seen (reads, confirmations, changes): a full read below it means the store went back. */
  private highest: string | null = null;
  /**
   * While live: a revision up to which the copy holds every change (or a later change of the
   * same key); null when not live. Untrusted progress answers and changed-key reads count from it.
   */
  private complete: string | null = null;
  /** The newest change the watch's current stream has reported. */
  private streamSeen: string | null = null;
  private misses = 0;
  private pausedUntil = 0;
  private pauseReported = false;
  /** Why progress answers are not trusted, as last told to the operator. */
  private distrustReported: string | null = null;

  constructor(
    private readonly kv: KeyValueStore,
    private readonly clock: Clock,
    /** Hears every change applied from the watch (`''`: the watch reconnected), after the copy has it. */
    private readonly onChange: (key: string, value: string | null) => void,
    private readonly logger: Logger,
  ) {}

  /** Starts the watch (once). Never throws. */
  start(): void {
    if (this.unwatch) return;
    this.unwatch = this.kv.watch((key, value, info) => this.event(key, value, info));
  }

  /** Stops the watch; the copy is no longer trusted. */
  stop(): void {
    this.unwatch?.();
    this.unwatch = null;
    this.live = false;
    this.watchFrom = null;
    this.complete = null;
    this.streamSeen = null;
  }

  /** Whether the copy follows the store (loaded since the watch last connected). */
  get isLive(): boolean {
    return this.live;
  }

  /** The last confirmation (or full read) of a live copy; null when the copy is not live. */
  get confirmation(): Confirmation | null {
    return this.live ? this.confirmedAt : null;
  }

  /** Counts every change the copy has taken in; equal counts mean an identical copy. */
  get changes(): number {
    return this.version;
  }

  /** What the copy holds for `key` (undefined: absent or deleted). */
  entry(key: string): DcsEntry | undefined {
    const k = this.known.get(key);
    return k && k.value !== null ? { value: k.value, revision: k.revision, lease: k.lease } : undefined;
  }

  /** Every present key of the copy. */
  snapshot(): DcsSnapshot {
    if (this.snapshotOf?.version === this.version) return this.snapshotOf.snapshot;
    const out = new Map<string, DcsEntry>();
    for (const [key, k] of [...this.known].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      if (k.value !== null) out.set(key, Object.freeze({ value: k.value, revision: k.revision, lease: k.lease }));
    }
    this.snapshotOf = { version: this.version, snapshot: out };
    return out;
  }

  /**
   * Confirms a live copy is current, as of a moment at or after `at`, and includes every
   * write of this client up to `minRevision`. False when the copy is not live, the watch did
   * not answer, or it reconnected meanwhile. Never throws.
   */
  async confirm(at: number, minRevision: string): Promise<boolean> {
    // A confirmation asked for at the same moment (a leader's renewal and its loop's read) serves both: each
    // progress request waits for the one before it, so a second one would cost a round trip more.
    const shared = this.confirming;
    if (shared !== null && shared.at >= at - SHARED_CONFIRMATION_MS && compareRevisions(shared.minRevision, minRevision) >= 0) return shared.done;
    const done = this.confirmNow(at, minRevision);
    const mine = { at, minRevision, done };
    this.confirming = mine;
    try {
      return await done;
    } finally {
      if (this.confirming === mine) this.confirming = null;
    }
  }

  /**
   * Makes the copy current as of a moment at or after `at`: confirmed through the watch when it
   * can be, else read in full. Throws DcsUnavailableError (the full read).
   */
  async refresh(at: number, minRevision: string): Promise<void> {
    if (!(await this.confirm(at, minRevision))) await this.load(at);
  }

  private async confirmNow(at: number, minRevision: string): Promise<boolean> {
    // A watch that is down (reconnecting) cannot confirm: its reconnect makes the copy load anew.
    if (!this.live || !this.kv.watching() || this.clock.now() < this.pausedUntil) return false;
    const trusted = this.trusted();
    const generation = this.generation;
    const revision = await this.kv.progress();
    if (revision === null) {
      if (generation === this.generation) this.missed();
      return false;
    }
    if (this.misses > 0 || this.pauseReported) this.answered();
    if (generation !== this.generation || !this.live) return false;
    // Below what the copy was read at: a member behind, or a store that lost its data; the
    // caller's full read (linearizable) tells which (see wentBack).
    if (this.highest !== null && compareRevisions(revision, this.highest) < 0) return false;
    // A watch served by a member behind this client's own writes would hide them.
    if (compareRevisions(revision, minRevision) < 0) return false;
    // An answer that may overtake changes still on their way vouches only for a store that has not moved past what
    // the copy holds: when it has, the changes since are read.
    if (!trusted && (this.complete === null || compareRevisions(revision, this.complete) > 0)) return this.confirmByChanges(at, minRevision, generation);
    this.confirmed({ at, revision });
    return true;
  }

  /**
   * Confirms the copy by one read of the keys changed since the revision it is complete to:
   * applied, they make it equal the store when the store holds as many keys as the copy then
   * would (a key deleted meanwhile makes the copy hold one more; the caller reads in full).
   */
  private async confirmByChanges(at: number, minRevision: string, generation: number): Promise<boolean> {
    const since = this.complete;
    if (since === null) return false;
    let read: ChangesSince;
    try {
      read = await this.kv.readChangedSince(since);
    } catch {
      // The caller's full read fails the same way, and says so.
      return false;
    }
    if (generation !== this.generation || !this.live || this.complete === null) return false;
    const { changed, count, revision } = read;
    // As for progress answers: a member behind the copy or this client's writes tells nothing; the full read decides.
    if (this.highest !== null && compareRevisions(revision, this.highest) < 0) return false;
    if (compareRevisions(revision, minRevision) < 0) return false;
    if (compareRevisions(this.complete, revision) < 0) {
      let present = changed.size;
      for (const [key, k] of this.known) if (k.value !== null && !changed.has(key)) present++;
      if (present !== count) return false;
      this.complete = revision;
      for (const [key, e] of changed) if (this.apply(key, e.value, e.revision, e.lease ?? null)) this.onChange(key, e.value);
    }
    this.confirmed({ at, revision });
    return true;
  }

  /**
   * Reads the whole prefix (one range read) into the copy; the copy is live afterwards when
   * the watch's stream started at or before the read's revision. Throws DcsUnavailableError.
   */
  async load(at: number = this.clock.now()): Promise<void> {
    // Before its first stream is up the watch would miss what changes right after the read: wait a moment for it.
    if (this.unwatch && this.watchFrom === null && !this.kv.watching()) await this.kv.whenWatching(FIRST_STREAM_WAIT_MS);
    // A linearizable read answers at or above every revision seen before it was sent; the watch may deliver
    // later changes (or a confirmation may pass them) while it is in flight, which says nothing of etcd going back.
    const before = this.highest;
    const { entries, revision } = await this.kv.readAllAt();
    if (before !== null && compareRevisions(revision, before) < 0) this.wentBack(revision);
    this.saw(revision);
    for (const [key, e] of entries) this.apply(key, e.value, e.revision, e.lease ?? null);
    // A key the read did not see, known at or below its revision, was deleted by then.
    for (const [key, k] of [...this.known]) {
      if (entries.has(key) || compareRevisions(k.revision, revision) > 0) continue;
      this.known.delete(key);
      if (k.value !== null) this.version++;
    }
    if (this.loadedRevision === null || compareRevisions(revision, this.loadedRevision) > 0) this.loadedRevision = revision;
    // Live when the watch reports every change after this read: its stream started at or before it.
    if (this.unwatch && (this.watchFrom !== null ? compareRevisions(revision, this.watchFrom) >= 0 : this.kv.watching())) {
      this.live = true;
      // The read holds every change up to its revision, the stream every one after its start, in order.
      this.complete = [this.complete, this.streamSeen].reduce<string>((a, b) => (b === null ? a : maxRevision(a, b)), revision);
      this.confirmed({ at, revision });
    }
  }

  /**
   * A full read answered below an earlier one: etcd lost its data or was restored from a
   * snapshot while the agent ran. Every key the copy holds may be gone or older there, and its
   * revisions say nothing about the new store's (a stale leader key would outrank every change
   * until the new revisions passed the old ones): the copy starts afresh from this read.
   */
  private wentBack(revision: string): void {
    this.logger.warn(`etcd's revision went back from ${this.highest} to ${revision} (its data was lost or restored): reading the cluster afresh`);
    if ([...this.known.values()].some((k) => k.value !== null)) this.version++;
    this.known.clear();
    this.loadedRevision = null;
    this.highest = null;
    this.confirmedAt = null;
    this.live = false;
    this.complete = null;
    this.streamSeen = null;
    this.kv.storeWentBack(revision);
    this.onChange('', null);
  }

  /** Whether the store's progress answers can be trusted now; says once why not, and when they can again. */
  private trusted(): boolean {
    const trust = this.kv.progressTrust();
    if (trust.trusted) {
      if (this.distrustReported !== null) this.logger.info('etcd\'s watch progress answers can be trusted again: the cluster is read from the watched copy');
      this.distrustReported = null;
      return true;
    }
    if (trust.why !== null && trust.why !== this.distrustReported) {
      this.distrustReported = trust.why;
      this.logger.warn(`${trust.why}: its answers confirm the watched copy only while etcd's revision stands where the copy is; otherwise the keys changed since are read`);
    }
    return false;
  }

  /** A live watch left a progress request unanswered. */
  private missed(): void {
    if (++this.misses < MISSES_BEFORE_PAUSE) return;
    this.misses = 0;
    this.pausedUntil = this.clock.now() + CONFIRM_PAUSE_MS;
    if (this.pauseReported) return;
    this.pauseReported = true;
    this.logger.warn(`etcd left ${MISSES_BEFORE_PAUSE} watch progress requests in a row unanswered: the cluster is read in full on every tick, asking again every ${CONFIRM_PAUSE_MS / 1000} s`);
  }

  private answered(): void {
    this.misses = 0;
    if (!this.pauseReported) return;
    this.pauseReported = false;
    this.logger.info('etcd answers watch progress requests again: the cluster is read from the watched copy');
  }

  private confirmed(c: Confirmation): void {
    this.saw(c.revision);
    if (this.live && this.complete !== null) this.complete = maxRevision(this.complete, c.revision);
    if (this.confirmedAt === null || c.at >= this.confirmedAt.at) this.confirmedAt = c;
  }

  private saw(revision: string): void {
    if (this.highest === null || compareRevisions(revision, this.highest) > 0) this.highest = revision;
  }

  private event(key: string, value: string | null, info: WatchInfo): void {
    if (key === '') {
      // A new stream reports the changes after its start: the copy follows the store only when a read reached that far.
      this.watchFrom = info.revision;
      this.live = this.loadedRevision !== null && compareRevisions(this.loadedRevision, info.revision) >= 0;
      this.complete = this.live ? this.loadedRevision : null;
      this.streamSeen = null;
      this.generation++;
      this.confirmedAt = null;
      this.onChange('', null);
      return;
    }
    this.streamSeen = this.streamSeen === null ? info.revision : maxRevision(this.streamSeen, info.revision);
    // A key the copy lacks, created at or below the revision it is complete to, was gone again by then (a read
    // answered after the change and its delete, which the stream reports late): it must not reappear meanwhile.
    const stale = this.live && this.complete !== null && compareRevisions(info.revision, this.complete) <= 0;
    if (stale && value !== null && this.known.get(key)?.value == null) return;
    if (this.live && this.complete !== null) this.complete = maxRevision(this.complete, info.revision);
    if (this.apply(key, value, info.revision, value === null ? null : info.lease)) this.onChange(key, value);
  }

  /** Takes a key's state in when it is newer than what the copy has; true when it was. */
  private apply(key: string, value: string | null, revision: string, lease: string | null): boolean {
    const k = this.known.get(key);
    if (k && compareRevisions(k.revision, revision) >= 0) return false;
    this.saw(revision);
    this.known.set(key, { value, revision, lease });
    if (value !== null || (k !== undefined && k.value !== null)) this.version++;
    return true;
  }
}
