import http from 'node:http';
import https from 'node:https';
import { createSecureContext } from 'node:tls';
import { DcsUnavailableError } from '../../domain/errors.js';
import type { Logger } from '../../ports/logger.js';
import { closeReplacedAgent } from '../http/replaced-agent.js';
import { RequestTargets } from '../http/request-targets.js';
import { asUnavailable, withinDeadline } from './etcd3-deadline.js';
import { GatewayPrefixWatch } from './etcd3-gateway-watch.js';
// Not etcd3-options.js: it loads the gRPC client this adapter exists to avoid.
import { etcd3HostUrls, etcd3TlsFiles, type Etcd3Credentials, type Etcd3KeyValueOptions } from './etcd3-endpoints.js';
import { Etcd3ProgressTrust } from './etcd3-progress-trust.js';
import { compareRevisions, maxRevision, type ChangesSince, type KeyValueStore, type ProgressTrust, type PutOptions, type RevisionedSnapshot, type WatchInfo, type WriteCondition } from './key-value.js';
import { PrefixWatchSet } from './prefix-watch-set.js';
import type { DcsEntry, DcsSnapshot } from './keys.js';

/** TTL of a lease granted by a leased write before any keepAlive (the default `ttl`). */
const DEFAULT_LEASE_TTL_SECONDS = 30;

/** Bounds of how long a watch progress request waits for its answer before the stream is reopened, on a quick link. */
const PROGRESS_TIMEOUT_MIN_MS = 250;
const PROGRESS_TIMEOUT_MAX_MS = 2000;

/** How often a client that discovers members asks the etcd cluster for them again. */
const MEMBER_REFRESH_MS = 5 * 60_000;

/** Options of the gateway store: the connection, and whether full reads may be served by any member. */
export interface Etcd3GatewayKeyValueOptions extends Etcd3KeyValueOptions {
  /**
   * Serve range reads from the member asked, without confirming with the raft leader
   * (cheaper; a member cut off from the quorum may answer with an old view). Default false.
   */
  readonly serializableReads?: boolean;
  /**
   * Learn the etcd cluster's members (their advertised client URLs) at start and every few
   * minutes, and call them as well as the hosts given, so members replaced since the hosts
   * were written stay reachable. Off (the default) when the hosts are proxies or load balancers.
   */
  readonly discoverMembers?: boolean;
  /** Says when the members learned change. */
  readonly logger?: Logger;
  /**
   * How long a call keeps trying again while every member refuses the connection or cannot be
   * reached at all (nothing was sent); default the retry timeout. An agent rides out an etcd
   * restart this way; a command typed by an operator wants its answer sooner.
   */
  readonly unreachableRetryMs?: number;
}

type Json = Record<string, unknown>;

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: unknown) => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

/** The first key after every key that starts with `prefix` (etcd's range_end of a prefix). */
function prefixEnd(prefix: string): string {
  const bytes = Buffer.from(prefix, 'utf8');
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i]! < 0xff) {
      const end = Buffer.from(bytes.subarray(0, i + 1));
      end[i]! += 1;
      return end.toString('base64');
    }
  }
  return Buffer.from([0]).toString('base64');
}

/** An error etcd answered with (HTTP status and its message). */
/**
 * What etcd said when it did not answer JSON (its gateway answers some refusals in plain
 * text): the text itself, and the way out for the one operators meet in a TLS setup.
 */
export function plainTextAnswer(status: number, text: string): string {
  const said = text.trim().replace(/\s+/g, ' ').slice(0, 300);
  const hint = /CommonName/i.test(said)
    ? ': with authentication on, etcd refuses a client certificate that has a common name (CN) on its JSON gateway; give etcd3.cert a certificate without a CN (the etcd user is etcd3.username)'
    : '';
  return said ? `etcd answered ${status}: ${said}${hint}` : `etcd answered ${status} with an empty body`;
}

class GatewayError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }

  /** The member refused before acting on the request (it has no raft leader): another member may serve it. */
  get refusedWithoutLeader(): boolean {
    return /no leader/i.test(this.message);
  }

  /** The member could not serve the request now (HTTP 503: no leader, a leader change, a timeout inside etcd). */
  get unavailable(): boolean {
    return this.status === 503 || this.refusedWithoutLeader;
  }
}

/** Calls that may go to another member whatever became of an attempt that got no answer. */
const IDEMPOTENT_PATHS = new Set(['/v3/kv/range', '/v3/lease/keepalive', '/v3/lease/timetolive', '/v3/auth/authenticate']);

/** Connection failures after which the request surely never reached etcd. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Least time one attempt on one member gets, when the retry timeout is shared among several. */
const MIN_ATTEMPT_MS = 1000;

/** First pause before every member is tried again after all refused; it doubles up to RETRY_PAUSE_MAX_MS. */
const RETRY_PAUSE_MS = 100;
const RETRY_PAUSE_MAX_MS = 1000;

/** Least time left before the retry timeout for one more pass over the members to be worth it. */
const MIN_RETRY_ATTEMPT_MS = 200;

/** Idle keep-alive connections kept per etcd member. */
const IDLE_SOCKETS_PER_MEMBER = 4;

/** What a credentials reload changed. */
export interface CredentialsReloaded {
  /** The TLS files differ from the ones in force: new connections present and verify with them. */
  readonly tls: boolean;
  /** The etcd user or its password changed: the next call authenticates again. */
  readonly user: boolean;
}

type TlsFiles = ReturnType<typeof etcd3TlsFiles>;

const sameBytes = (a: Buffer | undefined, b: Buffer | undefined) => (a === undefined || b === undefined ? a === b : a.equals(b));

/**
 * The `KeyValueStore` port over etcd v3's JSON gateway (`POST /v3/kv/range`, `/v3/kv/txn`,
 * `/v3/lease/*`, `/v3/watch`) with plain `node:http(s)`: same semantics as `Etcd3KeyValue`
 * (one lease per client, transactions for atomic create and compare-and-set, one range read
 * of the prefix, a prefix watch that answers progress requests), without gRPC. Loading it
 * costs a few milliseconds instead of ~200 ms for the gRPC stack, and an agent using it holds
 * ~20 MiB less memory. Every call settles within the retry timeout with a result or a
 * `DcsUnavailableError`; hosts are tried in order until one answers.
 */
export class Etcd3GatewayKeyValue implements KeyValueStore {
  /** The members calls go to, in order (see refreshMembers); changed in place: the watch and the version check share it. */
  private readonly urls: string[];
  private readonly configured: readonly string[];
  private membersTimer: NodeJS.Timeout | null = null;
  private readonly prefix: string;
  private agent: http.Agent;
  private tls: TlsFiles;
  private readonly targets = new RequestTargets();
  private user: { readonly username?: string; readonly password?: string };
  private readonly trust: Etcd3ProgressTrust;
  private retryTimeoutMs: number;
  private leaseId: string | null = null;
  private leaseTtl = DEFAULT_LEASE_TTL_SECONDS;
  private granting: Promise<string> | null = null;
  private token: Promise<string> | null = null;
  private readonly watches = new PrefixWatchSet<GatewayPrefixWatch>();
  private written = '0';
  private isClosed = false;
  /** The member the next call goes to first: the last one that answered, or the one after the last that failed. */
  private preferred = 0;

  constructor(private readonly opts: Etcd3GatewayKeyValueOptions) {
    this.urls = etcd3HostUrls(opts);
    this.configured = [...this.urls];
    this.prefix = opts.prefix;
    this.retryTimeoutMs = opts.retryTimeoutMs;
    this.tls = etcd3TlsFiles(opts);
    this.user = { ...(opts.username !== undefined ? { username: opts.username } : {}), ...(opts.password !== undefined ? { password: opts.password } : {}) };
    this.trust = new Etcd3ProgressTrust(this.urls, () => this.tls, () => this.retryTimeoutMs);
    this.agent = this.newAgent();
    if (opts.discoverMembers) {
      void this.refreshMembers();
      this.membersTimer = setInterval(() => void this.refreshMembers(), MEMBER_REFRESH_MS);
      this.membersTimer.unref();
    }
  }

  /**
   * Asks etcd for its members and calls them too: the configured hosts etcd lists, in their
   * order, then the other members' advertised client URLs, then the configured hosts etcd no
   * longer lists (a member that advertises an address this host cannot reach costs one failed
   * attempt, then the next one serves). Never throws: without an answer the list stays.
   */
  async refreshMembers(): Promise<void> {
    let res: Json;
    try {
      res = await this.bounded('memberList', () => this.call('/v3/cluster/member/list', {}));
    } catch {
      return;
    }
    const learned = new Set<string>();
    for (const m of Array.isArray(res['members']) ? (res['members'] as Json[]) : []) {
      for (const u of Array.isArray(m['clientURLs']) ? (m['clientURLs'] as unknown[]) : []) {
        if (typeof u === 'string' && /^https?:\/\/[^/\s]+\/?$/.test(u)) learned.add(u.replace(/\/+$/, ''));
      }
    }
    if (learned.size === 0 || this.isClosed) return;
    // The operator's order first (a near member listed first stays first), then the members it does not name,
    // then the hosts etcd no longer lists (a way back if every member learned becomes unreachable).
    const next = [...new Set([...this.configured.filter((u) => learned.has(u)), ...learned, ...this.configured])];
    if (next.join(' ') === this.urls.join(' ')) return;
    const current = this.urls[this.preferred];
    this.urls.splice(0, this.urls.length, ...next);
    this.preferred = Math.max(0, current === undefined ? 0 : next.indexOf(current));
    this.opts.logger?.info('etcd members learned from the cluster: the agent calls them as well as etcd3.hosts', { members: [...learned], order: next });
  }

  private newAgent(): http.Agent {
    // etcd never closes an idle connection: a burst of reads (an outage's end) would leave every socket it opened
    // open for good. A few idle ones per member serve the steady state; the rest close once used.
    const pool = { keepAlive: true, maxFreeSockets: IDLE_SOCKETS_PER_MEMBER };
    return this.urls.some((u) => u.startsWith('https:')) ? new https.Agent({ ...pool, ...this.tls }) : new http.Agent(pool);
  }

  /**
   * Takes the credentials anew (a reload): the TLS files are read again, same paths renewed in
   * place or new ones, and new connections (calls, the watch's next stream) present and verify
   * with them; open ones finish their requests with the old. A changed etcd user or password
   * makes the next call authenticate again. Throws, with the ones in force kept, when a file
   * cannot be read or a key does not fit its certificate. The scheme and hosts stay as started.
   */
  reloadCredentials(c: Etcd3Credentials): CredentialsReloaded {
    const tls = etcd3TlsFiles(c);
    const https_ = this.urls.some((u) => u.startsWith('https:'));
    // Checked before anything is replaced: a certificate without its key (or the wrong key) would fail every new connection.
    if (https_ && (tls.cert !== undefined || tls.key !== undefined)) createSecureContext(tls);
    const tlsChanged = !(sameBytes(tls.ca, this.tls.ca) && sameBytes(tls.cert, this.tls.cert) && sameBytes(tls.key, this.tls.key));
    if (tlsChanged) {
      this.tls = tls;
      closeReplacedAgent(this.agent);
      this.agent = this.newAgent();
    }
    const userChanged = c.username !== this.user.username || (c.username !== undefined && (c.password ?? '') !== (this.user.password ?? ''));
    if (userChanged) {
      this.user = { ...(c.username !== undefined ? { username: c.username } : {}), ...(c.password !== undefined ? { password: c.password } : {}) };
      this.token = null;
    }
    return { tls: tlsChanged, user: userChanged };
  }

  setRetryTimeout(ms: number): void {
    this.retryTimeoutMs = ms;
  }

  async readAll(): Promise<DcsSnapshot> {
    return (await this.readAllAt()).entries;
  }

  readAllAt(): Promise<RevisionedSnapshot> {
    return this.bounded('readAll', async () => {
      const res = await this.call('/v3/kv/range', this.rangeOfPrefix());
      return { entries: this.entriesOf(res), revision: headerRevision(res) };
    });
  }

  readChangedSince(revision: string): Promise<ChangesSince> {
    return this.bounded('readChangedSince', async () => {
      // etcd filters by min_mod_revision after counting: count is of every key under the prefix.
      const res = await this.call('/v3/kv/range', { ...this.rangeOfPrefix(), min_mod_revision: String(BigInt(revision) + 1n) });
      return { changed: this.entriesOf(res), count: Number(res['count'] ?? 0), revision: headerRevision(res) };
    });
  }

  private rangeOfPrefix(): Json {
    return { key: b64(this.prefix), range_end: prefixEnd(this.prefix), serializable: this.opts.serializableReads === true };
  }

  /** The entries of a range answer, keyed by their name under the prefix. */
  private entriesOf(res: Json): Map<string, DcsEntry> {
    const out = new Map<string, DcsEntry>();
    for (const kv of (res['kvs'] as Json[] | undefined) ?? []) {
      const lease = kv['lease'] === undefined ? null : String(kv['lease']);
      out.set(unb64(kv['key']).slice(this.prefix.length), Object.freeze({ value: unb64(kv['value']), revision: String(kv['mod_revision'] ?? '0'), lease }));
    }
    return out;
  }

  currentLease(): string | null {
    return this.leaseId;
  }

  writtenRevision(): string {
    return this.written;
  }

  storeWentBack(revision: string): void {
    if (compareRevisions(this.written, revision) > 0) this.written = revision;
  }

  keepAlive(ttlSeconds: number): Promise<boolean> {
    // Named for what it will ask etcd: a lease it may refuse to grant (out of space) is told from one it stops renewing.
    const renewing = this.leaseId !== null && ttlSeconds === this.leaseTtl;
    return this.bounded(renewing ? 'lease keep-alive' : 'lease grant', async () => {
      const id = this.leaseId;
      if (id !== null && ttlSeconds === this.leaseTtl) {
        const res = await this.call('/v3/lease/keepalive', { ID: id });
        if (Number((res['result'] as Json | undefined)?.['TTL'] ?? 0) > 0) return true;
      }
      // A lease of another TTL is left to expire: keys on it move over on their next leased write.
      this.leaseTtl = ttlSeconds;
      this.leaseId = null;
      await this.lease();
      return false;
    });
  }

  create(key: string, value: string, opts?: { readonly leased?: boolean }): Promise<string | null> {
    return this.write('create', key, value, opts?.leased ?? false, { revision: '0' });
  }

  async put(key: string, value: string, opts?: PutOptions): Promise<boolean> {
    return (await this.write('put', key, value, opts?.leased ?? false, opts?.if)) !== null;
  }

  delete(key: string, cond?: WriteCondition): Promise<boolean> {
    return this.bounded(`delete ${key}`, async () => {
      const del = { key: b64(this.prefix + key) };
      if (!hasCondition(cond)) return Number(this.wrote(await this.call('/v3/kv/deleterange', del))['deleted'] ?? 0) > 0;
      const res = this.wrote(await this.call('/v3/kv/txn', { compare: this.compare(key, cond), success: [{ request_delete_range: del }] }));
      const responses = (res['responses'] as Json[] | undefined) ?? [];
      return res['succeeded'] === true && Number((responses[0]?.['response_delete_range'] as Json | undefined)?.['deleted'] ?? 0) > 0;
    });
  }

  revokeLease(): Promise<void> {
    return this.bounded('revokeLease', async () => {
      const id = this.leaseId;
      if (id === null) return;
      try {
        this.wrote(await this.call('/v3/lease/revoke', { ID: id }));
      } catch (e) {
        // A lease etcd no longer knows counts as revoked.
        if (!(e instanceof GatewayError && /lease not found/.test(e.message))) throw e;
      }
      if (this.leaseId === id) this.leaseId = null;
    });
  }

  watch(listener: (key: string, value: string | null, info: WatchInfo) => void): () => void {
    return this.watchRange({ key: b64(this.prefix), rangeEnd: prefixEnd(this.prefix) }, listener);
  }

  /**
   * Watches one key under the prefix alone (a fencer that follows the leader key need not
   * hear every other change); reports as `watch` does, `''` on every (re)connect.
   */
  watchKey(key: string, listener: (key: string, value: string | null, info: WatchInfo) => void): () => void {
    // An empty range end: the key alone.
    return this.watchRange({ key: b64(this.prefix + key), rangeEnd: '' }, listener);
  }

  private watchRange(range: { readonly key: string; readonly rangeEnd: string }, listener: (key: string, value: string | null, info: WatchInfo) => void): () => void {
    if (this.isClosed) return () => {};
    const w = new GatewayPrefixWatch(
      {
        urls: this.urls,
        preferred: () => this.preferred,
        prefix: this.prefix,
        range,
        headers: () => this.headers(),
        tokenRejected: () => {
          this.token = null;
        },
        open: (url, path, headers, onResponse) => this.request(url, path, headers, onResponse, true),
        progressTimeoutMs: () => Math.min(PROGRESS_TIMEOUT_MAX_MS, Math.max(PROGRESS_TIMEOUT_MIN_MS, this.retryTimeoutMs / 2)),
        callTimeoutMs: () => this.retryTimeoutMs,
        closed: () => this.isClosed,
      },
      (key, value, info) => {
        // A new stream may be served by another member, or an upgraded one.
        if (key === '') this.trust.recheck();
        listener(key, value, info);
      },
    );
    this.watches.add(w);
    return () => {
      if (!this.watches.delete(w)) return;
      w.stop();
    };
  }

  watching(): boolean {
    return !this.isClosed && this.watches.live();
  }

  async whenWatching(timeoutMs: number): Promise<boolean> {
    return !this.isClosed && (await this.watches.whenLive(timeoutMs));
  }

  async progress(): Promise<string | null> {
    return this.isClosed ? null : this.watches.progress();
  }

  progressTrust(): ProgressTrust {
    return this.trust.current;
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    if (this.membersTimer) clearInterval(this.membersTimer);
    this.trust.stop();
    for (const w of this.watches.drain()) w.stop();
    this.agent.destroy();
  }

  /** A put, as a transaction when `cond` has members; false when the condition failed. */
  /** The put's revision (a transaction of one put makes the store revision of its answer); null on a failed condition. */
  private write(op: string, key: string, value: string, leased: boolean, cond: WriteCondition | undefined): Promise<string | null> {
    return this.bounded(`${op} ${key}`, async () => {
      const attempt = async (): Promise<string | null> => {
        const put: Json = { key: b64(this.prefix + key), value: b64(value) };
        if (leased) put['lease'] = await this.lease();
        if (!hasCondition(cond)) return headerRevision(this.wrote(await this.call('/v3/kv/put', put)));
        const res = this.wrote(await this.call('/v3/kv/txn', { compare: this.compare(key, cond), success: [{ request_put: put }] }));
        return res['succeeded'] === true ? headerRevision(res) : null;
      };
      try {
        return await attempt();
      } catch (e) {
        // A lease etcd lost is replaced once.
        if (!(leased && e instanceof GatewayError && /lease not found/.test(e.message))) throw e;
        this.leaseId = null;
        return attempt();
      }
    });
  }

  /** The transaction guard for `cond`: every given member must hold. */
  private compare(key: string, cond: WriteCondition): Json[] {
    const k = b64(this.prefix + key);
    const out: Json[] = [];
    // Revision '0' means "absent": etcd reports create revision 0 for a missing key.
    if (cond.revision !== undefined) {
      out.push(cond.revision === '0' ? { key: k, target: 'CREATE', result: 'EQUAL', create_revision: '0' } : { key: k, target: 'MOD', result: 'EQUAL', mod_revision: cond.revision });
    }
    // A value compare on a missing key fails in etcd, as the port requires.
    if (cond.value !== undefined) out.push({ key: k, target: 'VALUE', result: 'EQUAL', value: b64(cond.value) });
    return out;
  }

  /** This client's lease, granted with the last requested TTL when there is none. */
  private lease(): Promise<string> {
    if (this.leaseId !== null) return Promise.resolve(this.leaseId);
    this.granting ??= this.call('/v3/lease/grant', { TTL: String(this.leaseTtl) })
      .then((res) => {
        const id = String(res['ID']);
        this.leaseId = id;
        return id;
      })
      .finally(() => {
        this.granting = null;
      });
    return this.granting;
  }

  /** Headers of every call: JSON, plus the auth token when a user is configured. */
  private async headers(): Promise<Record<string, string>> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.user.username === undefined) return headers;
    this.token ??= this.authenticate().catch((e: unknown) => {
      this.token = null;
      throw e;
    });
    headers['authorization'] = await this.token;
    return headers;
  }

  private async authenticate(): Promise<string> {
    const res = await this.post('/v3/auth/authenticate', { name: this.user.username, password: this.user.password ?? '' }, { 'content-type': 'application/json' });
    if (typeof res['token'] !== 'string') throw new GatewayError(401, 'etcd returned no auth token');
    return res['token'];
  }

  /** One call with the auth token; a token etcd no longer accepts is renewed once. */
  private async call(path: string, body: Json): Promise<Json> {
    try {
      return await this.post(path, body, await this.headers());
    } catch (e) {
      if (!(this.user.username !== undefined && e instanceof GatewayError && /token/i.test(e.message))) throw e;
      this.token = null;
      return this.post(path, body, await this.headers());
    }
  }

  /**
   * POSTs to the members in turn, from the preferred one, each attempt with its share of the
   * retry timeout, until one answers. A member that cannot serve (unreachable, no raft
   * leader, no answer) makes the next call start with the next member. A request that may
   * have reached etcd and is not idempotent is not repeated elsewhere; nor is an error etcd
   * answered with, but for a member without a leader.
   */
  private async post(path: string, body: Json, headers: Record<string, string>): Promise<Json> {
    const startedAt = Date.now();
    const deadline = startedAt + this.retryTimeoutMs;
    const unreachableUntil = startedAt + Math.min(this.retryTimeoutMs, this.opts.unreachableRetryMs ?? this.retryTimeoutMs);
    for (let round = 0; ; round++) {
      const outcome = await this.postRound(path, body, headers, deadline);
      if ('answer' in outcome) return outcome.answer;
      // Every member refused (etcd restarting, a leader election): try them all again until the
      // retry timeout, as long as the request surely did not reach etcd or may be repeated, so
      // a blip of a second or two is not an outage (the leader would demote at once).
      const pause = Math.min(RETRY_PAUSE_MAX_MS, RETRY_PAUSE_MS * 2 ** round);
      const until = outcome.unreachable ? unreachableUntil : deadline;
      if (!outcome.repeatable || Date.now() + pause + MIN_RETRY_ATTEMPT_MS > until) throw asUnavailable(path, outcome.error);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  /**
   * One pass over the members (see post): the answer, or the last error, whether the request may
   * be sent again, and whether no member could be reached at all (every connection refused or
   * unroutable).
   */
  private async postRound(path: string, body: Json, headers: Record<string, string>, deadline: number): Promise<{ answer: Json } | { error: unknown; repeatable: boolean; unreachable: boolean }> {
    // The members as of this pass: a refresh meanwhile applies to the next one.
    const urls = [...this.urls];
    const n = urls.length;
    const left = Math.max(MIN_RETRY_ATTEMPT_MS, deadline - Date.now());
    const attemptMs = n > 1 ? Math.min(left, Math.max(MIN_ATTEMPT_MS, Math.floor(this.retryTimeoutMs / n))) : left;
    let last: unknown = null;
    let repeatable = true;
    let unreachable = true;
    const first = this.preferred;
    for (let i = 0; i < n; i++) {
      const url = urls[(first + i) % n]!;
      try {
        const answer = await this.postTo(url, path, body, headers, attemptMs);
        this.preferred = Math.max(0, this.urls.indexOf(url));
        return { answer };
      } catch (e) {
        if (e instanceof GatewayError && !e.unavailable) throw e;
        const at = this.urls.indexOf(url);
        if (at !== -1 && this.preferred === at) this.preferred = (at + 1) % this.urls.length;
        last = e;
        const noConnection = NOT_SENT_CODES.has(String((e as NodeJS.ErrnoException).code));
        if (!noConnection) unreachable = false;
        const notSent = (e instanceof GatewayError && e.refusedWithoutLeader) || noConnection;
        if (!notSent && !IDEMPOTENT_PATHS.has(path)) {
          repeatable = false;
          break;
        }
      }
    }
    return { error: last, repeatable, unreachable };
  }

  private postTo(url: string, path: string, body: Json, headers: Record<string, string>, timeoutMs: number = this.retryTimeoutMs): Promise<Json> {
    return new Promise<Json>((resolve, reject) => {
      const req = this.request(url, path, headers, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: Json = {};
          try {
            // A streaming endpoint (lease keepalive) answers one JSON object per line.
            parsed = text.trim() ? (JSON.parse(text.trim().split('\n')[0]!) as Json) : {};
          } catch {
            return reject(new Error(plainTextAnswer(res.statusCode ?? 0, text)));
          }
          const error = parsed['error'] as Json | string | undefined;
          if ((res.statusCode ?? 0) >= 400 || error !== undefined) {
            const message = typeof error === 'string' ? error : String(parsed['message'] ?? (error as Json | undefined)?.['message'] ?? `HTTP ${res.statusCode}`);
            return reject(new GatewayError(res.statusCode ?? 0, message));
          }
          resolve(parsed);
        });
      });
      req.on('error', reject);
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
      req.end(JSON.stringify(body));
    });
  }

  /** Remembers the revision a write answered with (the watched copy must show it before it is confirmed). */
  private wrote(res: Json): Json {
    this.written = maxRevision(this.written, headerRevision(res));
    return res;
  }

  /** A POST; `dedicated`: on a connection of its own (a watch stream), not one of the pool's. */
  private request(url: string, path: string, headers: Record<string, string>, onResponse: (res: http.IncomingMessage) => void, dedicated = false): http.ClientRequest {
    const target = this.targets.of(url);
    if (target === null) throw new Error(`not an http(s) URL: ${url}`);
    const options: https.RequestOptions = { ...target.options, path, method: 'POST', headers, agent: dedicated ? false : this.agent };
    if (target.secure) return https.request({ ...options, ...this.tls }, onResponse);
    return http.request(options, onResponse);
  }

  private bounded<T>(op: string, fn: () => Promise<T>): Promise<T> {
    if (this.isClosed) return Promise.reject(new DcsUnavailableError(`etcd ${op}: client is closed`));
    return withinDeadline(op, this.retryTimeoutMs, fn);
  }
}

/** The header revision of a gateway answer ('0' when it has none). */
function headerRevision(res: Json): string {
  const rev = (res['header'] as Json | undefined)?.['revision'];
  return typeof rev === 'string' && /^\d+$/.test(rev) ? rev : '0';
}

/** Whether a write condition has any member to compare. */
function hasCondition(cond: WriteCondition | undefined): cond is WriteCondition {
  return cond !== undefined && (cond.revision !== undefined || cond.value !== undefined);
}
