import { EtcdLeaseInvalidError, Etcd3, type ComparatorBuilder, type IKeyValue, type CompareTarget, type Namespace, type WatchClient } from 'etcd3';
import type { DcsEntry, DcsSnapshot } from './keys.js';
import { DcsUnavailableError } from '../../domain/errors.js';
import { compareRevisions, maxRevision, type ChangesSince, type KeyValueStore, type ProgressTrust, type PutOptions, type RevisionedSnapshot, type WatchInfo, type WriteCondition } from './key-value.js';
import { PrefixWatchSet } from './prefix-watch-set.js';
import { withinDeadline } from './etcd3-deadline.js';
import { Etcd3AgentLease } from './etcd3-lease.js';
import { etcd3HostUrls, etcd3TlsFiles } from './etcd3-endpoints.js';
import { etcd3ClientOptions, type Etcd3KeyValueOptions } from './etcd3-options.js';
import { Etcd3ProgressTrust } from './etcd3-progress-trust.js';
import { Etcd3PrefixWatch, requireLeaderWatchClient } from './etcd3-watch.js';

export type { Etcd3KeyValueOptions } from './etcd3-options.js';

/** Whether a write condition has any member to compare. */
function hasCondition(cond: WriteCondition | undefined): cond is WriteCondition {
  return cond !== undefined && (cond.revision !== undefined || cond.value !== undefined);
}

/** How long close() and unsubscribe wait for etcd to confirm a watch cancel. */
const WATCH_CANCEL_WAIT_MS = 500;

/** Bounds of how long a watch progress request waits for its answer before the stream is reopened. */
const PROGRESS_TIMEOUT_MIN_MS = 250;
const PROGRESS_TIMEOUT_MAX_MS = 2000;

/**
 * The `KeyValueStore` port over etcd v3 (`etcd3` package, gRPC): one lease per agent,
 * transactions for atomic create and compare-and-set, one linearizable range read of the
 * cluster prefix, and a prefix watch that answers progress requests. Every call settles
 * within `retryTimeoutMs` with a result or a `DcsUnavailableError`.
 */
export class Etcd3KeyValue implements KeyValueStore {
  private readonly client: Etcd3;
  private readonly ns: Namespace;
  private readonly lease: Etcd3AgentLease;
  private retryTimeoutMs: number;
  private readonly watches = new PrefixWatchSet<Etcd3PrefixWatch>();
  private readonly watchClient: WatchClient;
  private readonly trust: Etcd3ProgressTrust;
  private written = '0';
  private closed = false;

  constructor(opts: Etcd3KeyValueOptions) {
    this.retryTimeoutMs = opts.retryTimeoutMs;
    const timeout = () => this.retryTimeoutMs;
    const tlsFiles = etcd3TlsFiles(opts);
    this.trust = new Etcd3ProgressTrust(etcd3HostUrls(opts), () => tlsFiles, timeout);
    this.client = new Etcd3(etcd3ClientOptions(opts, timeout));
    this.ns = this.client.namespace(opts.prefix);
    this.lease = new Etcd3AgentLease(this.ns.leaseClient, timeout);
    this.watchClient = requireLeaderWatchClient(this.ns);
  }

  /** Applies a new `retry_timeout` (the dynamic config changed) to every later call. */
  setRetryTimeout(ms: number): void {
    this.retryTimeoutMs = ms;
  }

  async readAll(): Promise<DcsSnapshot> {
    return (await this.readAllAt()).entries;
  }

  readAllAt(): Promise<RevisionedSnapshot> {
    return this.bounded('readAll', async () => {
      // Linearizable: a member cut off from the quorum must not serve an old view as current.
      const res = await this.ns.getAll().all().exec();
      return { entries: entriesOf(res.kvs), revision: String(res.header?.revision ?? '0') };
    });
  }

  readChangedSince(revision: string): Promise<ChangesSince> {
    return this.bounded('readChangedSince', async () => {
      // etcd filters by min_mod_revision after counting: count is of every key under the prefix.
      const res = await this.ns.getAll().all().minModRevision(String(BigInt(revision) + 1n)).exec();
      return { changed: entriesOf(res.kvs), count: Number(res.count ?? 0), revision: String(res.header?.revision ?? '0') };
    });
  }

  currentLease(): string | null {
    return this.lease.currentId;
  }

  writtenRevision(): string {
    return this.written;
  }

  storeWentBack(revision: string): void {
    if (compareRevisions(this.written, revision) > 0) this.written = revision;
  }

  keepAlive(ttlSeconds: number): Promise<boolean> {
    return this.bounded('keepAlive', () => this.lease.keepAlive(ttlSeconds));
  }

  create(key: string, value: string, opts?: { readonly leased?: boolean }): Promise<string | null> {
    return this.write('create', key, value, opts?.leased ?? false, { revision: '0' });
  }

  async put(key: string, value: string, opts?: PutOptions): Promise<boolean> {
    return (await this.write('put', key, value, opts?.leased ?? false, opts?.if)) !== null;
  }

  delete(key: string, cond?: WriteCondition): Promise<boolean> {
    return this.bounded(`delete ${key}`, async () => {
      const del = this.ns.delete().key(key);
      if (!hasCondition(cond)) {
        const res = await del.exec();
        this.wrote(res.header?.revision);
        return Number(res.deleted) > 0;
      }
      const res = await this.compare(key, cond).then(del).commit();
      this.wrote(res.header?.revision);
      return res.succeeded && Number(res.responses[0]?.response_delete_range?.deleted ?? 0) > 0;
    });
  }

  revokeLease(): Promise<void> {
    return this.bounded('revokeLease', async () => {
      this.wrote(await this.lease.revoke());
    });
  }

  watch(listener: (key: string, value: string | null, info: WatchInfo) => void): () => void {
    if (this.closed) return () => {};
    const progressTimeout = () => Math.min(PROGRESS_TIMEOUT_MAX_MS, Math.max(PROGRESS_TIMEOUT_MIN_MS, this.retryTimeoutMs / 2));
    const w = new Etcd3PrefixWatch(
      this.watchClient,
      this.ns.prefix,
      (key, value, info) => {
        // A new stream may be served by another member, or an upgraded one.
        if (key === '') this.trust.recheck();
        listener(key, value, info);
      },
      progressTimeout,
    );
    this.watches.add(w);
    return () => {
      if (!this.watches.delete(w)) return;
      void w.stop(WATCH_CANCEL_WAIT_MS);
    };
  }

  watching(): boolean {
    return !this.closed && this.watches.live();
  }

  async whenWatching(timeoutMs: number): Promise<boolean> {
    return !this.closed && (await this.watches.whenLive(timeoutMs));
  }

  async progress(): Promise<string | null> {
    return this.closed ? null : this.watches.progress();
  }

  progressTrust(): ProgressTrust {
    return this.trust.current;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.trust.stop();
    const watches = this.watches.drain();
    // Cancelled watchers leave the package's watch manager, so it schedules no more reconnects.
    await Promise.all(watches.map((w) => w.stop(WATCH_CANCEL_WAIT_MS)));
    this.client.close();
  }

  /** A put, as a transaction when `cond` has members; false when the condition failed. */
  /** The put's revision (a transaction of one put makes the store revision of its answer); null on a failed condition. */
  private write(op: string, key: string, value: string, leased: boolean, cond: WriteCondition | undefined): Promise<string | null> {
    return this.bounded(`${op} ${key}`, () =>
      this.withLease(leased, async (leaseId) => {
        const put = this.ns.put(key).value(value);
        if (leaseId !== null) put.lease(leaseId);
        if (!hasCondition(cond)) {
          const revision = (await put.exec()).header?.revision;
          this.wrote(revision);
          return String(revision ?? '0');
        }
        const res = await this.compare(key, cond).then(put).commit();
        this.wrote(res.header?.revision);
        return res.succeeded ? String(res.header?.revision ?? '0') : null;
      }),
    );
  }

  /** The transaction guard for `cond`: every given member must hold. */
  private compare(key: string, cond: WriteCondition): ComparatorBuilder {
    const guards: Array<[keyof typeof CompareTarget, string | number]> = [];
    // Revision '0' means "absent": etcd reports create revision 0 for a missing key.
    if (cond.revision !== undefined) guards.push(cond.revision === '0' ? ['Create', 0] : ['Mod', cond.revision]);
    // A value compare on a missing key fails in etcd, as the port requires.
    if (cond.value !== undefined) guards.push(['Value', cond.value]);
    const [first, ...rest] = guards;
    const txn = this.ns.if(key, first![0], '==', first![1]);
    for (const [column, value] of rest) txn.and(key, column, '==', value);
    return txn;
  }

  /** Runs a write with this agent's lease (when `leased`); a lease etcd lost is replaced once. */
  private async withLease<T>(leased: boolean, write: (leaseId: string | null) => Promise<T>): Promise<T> {
    if (!leased) return write(null);
    const id = await this.lease.current();
    try {
      return await write(id);
    } catch (e) {
      if (!(e instanceof EtcdLeaseInvalidError)) throw e;
      this.lease.forget(id);
      return write(await this.lease.current());
    }
  }

  /** Remembers the revision a write answered with (the watched copy must show it before it is confirmed). */
  private wrote(revision: string | null | undefined): void {
    if (revision !== null && revision !== undefined && /^\d+$/.test(String(revision))) this.written = maxRevision(this.written, String(revision));
  }

  private bounded<T>(op: string, fn: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new DcsUnavailableError(`etcd ${op}: client is closed`));
    return withinDeadline(op, this.retryTimeoutMs, fn);
  }
}

/** The entries of a range answer, keyed by their name under the prefix. */
function entriesOf(kvs: readonly IKeyValue[]): Map<string, DcsEntry> {
  const out = new Map<string, DcsEntry>();
  for (const kv of kvs) {
    const lease = String(kv.lease ?? '0') === '0' ? null : String(kv.lease);
    out.set(kv.key.toString(), Object.freeze({ value: kv.value.toString(), revision: String(kv.mod_revision), lease }));
  }
  return out;
}
