import http from 'node:http';
import https from 'node:https';
import type { ProgressTrust } from './key-value.js';

/**
 * First patch release of each etcd minor version whose answers to a watch progress request
 * travel on the watch stream behind every change sent before them. Earlier releases answer
 * on a side channel that can overtake changes already queued for the stream, and can answer
 * for a watch that has yet to catch up; later minor versions are fixed from their first release.
 */
const FIXED_PATCH: Readonly<Record<string, number>> = { '3.4': 31, '3.5': 13 };

/** Pause before asking again when no member told its version, doubled up to the maximum. */
const RETRY_FIRST_MS = 1000;
const RETRY_MAX_MS = 30_000;
/** The least time a member gets to tell its version. */
const MIN_ANSWER_WAIT_MS = 2000;
/** How much of a /version answer is read: it is a few dozen bytes. */
const MAX_ANSWER_BYTES = 4096;

/** Whether etcd `version` answers watch progress requests in order with the changes it sends. */
export function progressInOrder(version: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version.trim());
  if (!m) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 3) return major > 3;
  if (minor >= 6) return true;
  const fixed = FIXED_PATCH[`${major}.${minor}`];
  return fixed !== undefined && patch >= fixed;
}

/** The server version an etcd client URL tells on `GET /version`, null when it does not answer in time. */
export function fetchEtcdVersion(base: string, tls: https.AgentOptions, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    let url: URL;
    try {
      url = new URL('/version', base);
    } catch {
      return resolve(null);
    }
    const onResponse = (res: http.IncomingMessage): void => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < MAX_ANSWER_BYTES) body += chunk;
      });
      res.on('error', () => resolve(null));
      res.on('end', () => {
        try {
          const v = (JSON.parse(body) as { etcdserver?: unknown }).etcdserver;
          resolve(res.statusCode === 200 && typeof v === 'string' ? v : null);
        } catch {
          resolve(null);
        }
      });
    };
    const options = { timeout: timeoutMs, agent: false as const };
    const req = url.protocol === 'https:' ? https.get(url, { ...options, ...tls }, onResponse) : http.get(url, options, onResponse);
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
  });
}

/**
 * Learns whether the etcd members a client talks to answer watch progress requests in order
 * (their versions, from `GET /version` on every client URL): asked again whenever a watch
 * (re)connects, as the stream may now be served by another member or an upgraded one. Until
 * the members answer, the answers are not trusted.
 */
export class Etcd3ProgressTrust {
  private state: ProgressTrust = { trusted: false, why: null };
  private round = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly urls: readonly string[],
    /** The TLS files in force (a reload may renew them). */
    private readonly tls: () => https.AgentOptions,
    private readonly timeoutMs: () => number,
  ) {}

  /** The verdict as of the last answers. */
  get current(): ProgressTrust {
    return this.state;
  }

  /** Asks every member its version again; the answers are not trusted until they come. Never throws. */
  recheck(): void {
    this.cancel();
    const round = ++this.round;
    this.state = { trusted: false, why: null };
    void this.ask(round, RETRY_FIRST_MS);
  }

  /** Stops asking. */
  stop(): void {
    this.cancel();
    this.round++;
  }

  private cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async ask(round: number, retryMs: number): Promise<void> {
    // Nothing waits on the answer: a slow link gets twice a call's bound, so it is not taken for a silent member.
    const timeoutMs = Math.max(MIN_ANSWER_WAIT_MS, 2 * this.timeoutMs());
    const versions = await Promise.all(this.urls.map((u) => fetchEtcdVersion(u, this.tls(), timeoutMs)));
    if (round !== this.round) return;
    const told = versions.filter((v): v is string => v !== null);
    if (told.length === 0) {
      // The watch is up, so some member is reachable: its /version may be served elsewhere (or not at all).
      this.state = { trusted: false, why: `etcd did not tell its version (GET /version on ${this.urls.join(', ')}), so its watch progress answers are not trusted` };
      this.timer = setTimeout(() => void this.ask(round, Math.min(RETRY_MAX_MS, retryMs * 2)), retryMs);
      this.timer.unref();
      return;
    }
    // Members that did not answer cannot be serving the watch now; one that does later reconnects it first.
    const behind = told.find((v) => !progressInOrder(v));
    this.state =
      behind === undefined
        ? { trusted: true, why: null }
        : {
            trusted: false,
            // Said once per version: the same releases fixed an old raft leader's revocation of leases renewed elsewhere.
            why: `etcd ${behind} may answer a watch progress request ahead of changes it has yet to send, and revoke every lease once its raft leader resumes after a stall longer than their TTL though the other members renewed them (both fixed in etcd 3.4.31, 3.5.13 and 3.6)`,
          };
  }
}
