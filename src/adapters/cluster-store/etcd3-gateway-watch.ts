import type http from 'node:http';
import type { WatchInfo } from './key-value.js';
import { OneAtATime, WatchLiveness } from './watch-liveness.js';

type Json = Record<string, unknown>;

/** Pause between two attempts to reopen a broken watch stream. */
const WATCH_RETRY_MS = 250;

const unb64 = (s: unknown) => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

/** What a gateway watch needs from its client. */
export interface GatewayWatchClient {
  /** etcd URLs, tried in turn when a stream breaks. */
  readonly urls: readonly string[];
  /** The index of the URL the client's calls go to first (the last member that answered). */
  preferred(): number;
  /** The watched prefix (absolute). */
  readonly prefix: string;
  /** base64 of the prefix and of its range end. */
  readonly range: { readonly key: string; readonly rangeEnd: string };
  /** Headers of a call (content type, auth token). Rejects when no token can be had. */
  headers(): Promise<Record<string, string>>;
  /** etcd refused the auth token: the next headers() fetch a new one. */
  tokenRejected(): void;
  /** Opens a POST on a connection of its own. */
  open(url: string, path: string, headers: Record<string, string>, onResponse: (res: http.IncomingMessage) => void): http.ClientRequest;
  /** How long a progress request may wait for its answer on a quick link (ms). */
  progressTimeoutMs(): number;
  /** The bound of one etcd call (retry_timeout, ms): no answer the stream waits for is given longer. */
  callTimeoutMs(): number;
  /** Whether the client was closed. */
  closed(): boolean;
}

/**
 * A prefix watch over etcd's JSON gateway (`POST /v3/watch`) that stays open both ways:
 * the request carries `Expect: 100-continue`, which lets etcd's HTTP/1.1 server answer
 * while the request body is still open, so further requests (progress requests) can follow
 * the create request on the same stream. A stream that breaks, is cancelled by etcd (a
 * compacted revision, a member that lost its raft leader: the stream asks for one with
 * `hasleader`), or leaves a progress request unanswered is reopened on the next URL; each
 * time it is live again the listener hears `''`.
 */
export class GatewayPrefixWatch {
  private req: http.ClientRequest | null = null;
  private readonly liveness = new WatchLiveness();
  private timer: NodeJS.Timeout | null = null;
  /** A stream not created within this long is given up for the next member. */
  private creating: NodeJS.Timeout | null = null;
  private attempt = 0;
  /** The answer a progress request waits for (one at a time). */
  private waiting: ((revision: string | null) => void) | null = null;
  private readonly progressRequests = new OneAtATime();
  /** How long the stream's last answer (its creation or a progress request) took, ms. */
  private lastAnswerMs = 0;
  /** Creations in a row that ran out of time: each allows the next one twice as long. */
  private slowCreations = 0;
  /** When the create request of the current stream was sent. */
  private createdSentAt = 0;

  constructor(
    private readonly client: GatewayWatchClient,
    private readonly listener: (key: string, value: string | null, info: WatchInfo) => void,
  ) {
    this.open();
  }

  /** Whether the stream is created and not broken since. */
  get isLive(): boolean {
    return this.liveness.isLive;
  }

  /** Resolves true once the stream is live (at once when it is), false after `ms` or when stopped. */
  whenLive(ms: number): Promise<boolean> {
    return this.liveness.whenLive(ms);
  }

  /** Asks etcd for the stream's progress; the revision once every change up to it was reported, null when not live or not answered in time. */
  progress(): Promise<string | null> {
    return this.progressRequests.run(() => this.oneProgress());
  }

  /** Stops watching. Never throws. */
  stop(): void {
    this.liveness.stop();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.drop();
  }

  /**
   * How long an answer may take: the quick link's bound, or twice the last answer's time on a
   * slow one (a stream whose answers take 3 s is slow, not dead: reopened at every request, it
   * would never serve a read), never more than an etcd call's bound.
   */
  private answerTimeoutMs(): number {
    return this.boundedWait(2 * this.lastAnswerMs);
  }

  /** `wantedMs`, at least the quick link's bound and at most an etcd call's. */
  private boundedWait(wantedMs: number): number {
    const quick = this.client.progressTimeoutMs();
    return Math.min(Math.max(quick, this.client.callTimeoutMs()), Math.max(quick, wantedMs));
  }

  private oneProgress(): Promise<string | null> {
    const req = this.req;
    if (!this.liveness.isLive || req === null) return Promise.resolve(null);
    const sentAt = Date.now();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting = null;
        resolve(null);
        // Unanswered: the stream may be dead without either end knowing. Start anew.
        if (this.req === req) this.reopen();
      }, this.answerTimeoutMs());
      this.waiting = (revision) => {
        clearTimeout(timer);
        this.waiting = null;
        if (revision !== null) this.lastAnswerMs = Date.now() - sentAt;
        resolve(revision);
      };
      req.write(JSON.stringify({ progress_request: {} }) + '\n');
    });
  }

  private open(): void {
    if (this.liveness.isStopped || this.client.closed()) return;
    const url = this.client.urls[(this.client.preferred() + this.attempt) % this.client.urls.length]!;
    void this.client.headers().then(
      (headers) => {
        if (this.liveness.isStopped || this.client.closed()) return;
        const streamHeaders = { ...headers, expect: '100-continue', 'grpc-metadata-hasleader': 'true' };
        let buffered = '';
        const req = this.client.open(url, '/v3/watch', streamHeaders, (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            if (res.statusCode === 401) this.client.tokenRejected();
            return this.broken(req);
          }
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffered += chunk;
            for (let nl = buffered.indexOf('\n'); nl >= 0 && this.req === req; nl = buffered.indexOf('\n')) {
              const line = buffered.slice(0, nl).trim();
              buffered = buffered.slice(nl + 1);
              if (line) this.message(req, line);
            }
          });
          res.on('end', () => this.broken(req));
          res.on('error', () => this.broken(req));
        });
        this.req = req;
        req.on('error', () => this.broken(req));
        const allowed = this.boundedWait(Math.max(2 * this.lastAnswerMs, this.client.progressTimeoutMs() * 2 ** this.slowCreations));
        this.createdSentAt = Date.now();
        this.creating = setTimeout(() => {
          if (this.req !== req || this.liveness.isLive) return;
          this.slowCreations++;
          this.broken(req);
        }, allowed);
        req.on('socket', (s) => s.setKeepAlive(true, 10_000));
        req.write(JSON.stringify({ create_request: { key: this.client.range.key, range_end: this.client.range.rangeEnd } }) + '\n');
      },
      () => this.retry(),
    );
  }

  private message(req: http.ClientRequest, line: string): void {
    let msg: Json;
    try {
      msg = JSON.parse(line) as Json;
    } catch {
      return;
    }
    const result = msg['result'] as Json | undefined;
    if (!result) {
      // An error in place of a response (e.g. an expired auth token): start anew.
      if (/token/i.test(JSON.stringify(msg['error'] ?? ''))) this.client.tokenRejected();
      return this.broken(req);
    }
    if (result['canceled'] === true) return this.broken(req);
    const events = (result['events'] as Json[] | undefined) ?? [];
    if (result['created'] === true) {
      if (this.creating) clearTimeout(this.creating);
      this.creating = null;
      this.lastAnswerMs = Date.now() - this.createdSentAt;
      this.slowCreations = 0;
      this.liveness.up();
      this.attempt = 0;
      // Changes may have been missed while no watch was open.
      this.emit('', null, { revision: String((result['header'] as Json | undefined)?.['revision'] ?? '0'), lease: null });
      return;
    }
    for (const ev of events) {
      const kv = (ev['kv'] as Json | undefined) ?? {};
      const key = unb64(kv['key']).slice(this.client.prefix.length);
      const deleted = ev['type'] === 'DELETE';
      const lease = kv['lease'] === undefined || deleted ? null : String(kv['lease']);
      this.emit(key, deleted ? null : unb64(kv['value']), { revision: String(kv['mod_revision'] ?? '0'), lease });
    }
    // A response without events is a progress notification: every change up to its revision was sent before it.
    if (events.length === 0) this.waiting?.(String((result['header'] as Json | undefined)?.['revision'] ?? '0'));
  }

  private emit(key: string, value: string | null, info: WatchInfo): void {
    if (this.liveness.isStopped) return;
    try {
      this.listener(key, value, info);
    } catch {
      // A throwing listener must not break the watch.
    }
  }

  /** The stream `req` ended or failed: reopen it on the next URL after a pause. */
  private broken(req: http.ClientRequest): void {
    if (this.req !== req) return;
    this.drop();
    this.attempt++;
    this.retry();
  }

  private reopen(): void {
    this.drop();
    this.attempt++;
    this.open();
  }

  private retry(): void {
    if (this.liveness.isStopped || this.client.closed() || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.open();
    }, WATCH_RETRY_MS);
  }

  private drop(): void {
    const req = this.req;
    this.req = null;
    if (this.creating) clearTimeout(this.creating);
    this.creating = null;
    this.liveness.down();
    this.waiting?.(null);
    req?.destroy();
  }
}
