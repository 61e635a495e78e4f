import http from 'node:http';
import https from 'node:https';
import { closeReplacedAgent } from '../http/replaced-agent.js';
import { RequestTargets } from '../http/request-targets.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { ClusterEvent } from '../../ports/events.js';
import type { PeerApi } from '../../ports/peer-api.js';

/** How to reach peers: Basic auth and TLS settings of the cluster's REST APIs. */
export interface HttpPeerApiOptions {
  /**
   * Sent as Basic auth on every request (peers require it on POST /failsafe when configured).
   * A function is asked per request, so credentials changed by a reload apply at once.
   */
  readonly auth?: PeerCredentials | (() => PeerCredentials | undefined);
  /** A function is asked per request: a new object (a reload read renewed files) is used from the next connection on. */
  readonly tls?: PeerTls | (() => PeerTls);
  /** Largest response body read, bytes (default 1 MiB); a larger one counts as a failure. */
  readonly maxBodyBytes?: number;
}

/** How this agent's HTTPS connections to its peers verify them and present themselves. */
export interface PeerTls {
  /** Verify the peer's certificate (default true). */
  readonly rejectUnauthorized?: boolean;
  /** CA bundle (PEM) to verify peers with. */
  readonly ca?: string | Buffer;
  /** Client certificate and key (PEM), for peers with verify_client. */
  readonly cert?: string | Buffer;
  readonly key?: string | Buffer;
}

/** The cluster's REST API credentials. */
export interface PeerCredentials {
  readonly username: string;
  readonly password: string;
}

interface Reply {
  readonly status: number;
  readonly body: string;
}

/**
 * Peers' REST APIs over HTTP(S) with node:http / node:https: keep-alive agents, a hard
 * deadline per call (one timer covers connect, headers and body), and no
 * exceptions: any failure is null / false, as the leader race and failsafe mode expect.
 * node:https is used rather than fetch because fetch needs the separate undici package
 * for per-client TLS settings (CA, client certificate, rejectUnauthorized).
 */
export class HttpPeerApi implements PeerApi {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  private httpsAgent: https.Agent;
  private readonly tls: () => PeerTls | undefined;
  private tlsFor: PeerTls | undefined;
  private readonly auth: () => PeerCredentials | undefined;
  private authFor: PeerCredentials | undefined;
  private authHeader: string | null = null;
  private readonly maxBodyBytes: number;
  private readonly targets = new RequestTargets();

  constructor(opts: HttpPeerApiOptions = {}) {
    const tls = opts.tls;
    this.tls = typeof tls === 'function' ? tls : () => tls;
    this.tlsFor = this.tls();
    this.httpsAgent = httpsAgentOf(this.tlsFor);
    const auth = opts.auth;
    this.auth = typeof auth === 'function' ? auth : () => auth;
    this.maxBodyBytes = opts.maxBodyBytes ?? 1024 * 1024;
  }

  async fetchStatus(apiUrl: string, timeoutMs: number, opts?: { readonly fresh?: boolean }): Promise<NodeStatus | null> {
    const started = Date.now();
    let reply = await this.request('GET', apiUrl, opts?.fresh ? 'node?fresh=true' : 'node', null, timeoutMs);
    if (opts?.fresh && reply?.status === 400) {
      // An agent of an earlier version refuses the query: during a rolling upgrade its published status is all there is.
      const left = timeoutMs - (Date.now() - started);
      reply = left > 0 ? await this.request('GET', apiUrl, 'node', null, left) : null;
    }
    if (!reply || reply.status !== 200) return null;
    try {
      const doc: unknown = JSON.parse(reply.body);
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return null;
      const d = doc as Record<string, unknown>;
      return typeof d['state'] === 'string' && typeof d['role'] === 'string' ? (d as unknown as NodeStatus) : null;
    } catch {
      return null;
    }
  }

  async postFailsafe(
    apiUrl: string,
    body: { readonly name: string; readonly members: Readonly<Record<string, string>> },
    timeoutMs: number,
  ): Promise<boolean> {
    const reply = await this.request('POST', apiUrl, 'failsafe', JSON.stringify(body), timeoutMs);
    return reply?.status === 200;
  }

  async fetchEvents(apiUrl: string, timeoutMs: number): Promise<readonly ClusterEvent[]> {
    const reply = await this.request('GET', apiUrl, 'events?format=json', null, timeoutMs);
    if (!reply || reply.status !== 200) return [];
    try {
      const list: unknown = JSON.parse(reply.body);
      return Array.isArray(list) ? (list as ClusterEvent[]) : [];
    } catch {
      return [];
    }
  }

  /** The HTTPS agent of the TLS settings in force: a new one when they changed; the old one's requests finish first. */
  private secureAgent(): https.Agent {
    const tls = this.tls();
    if (tls !== this.tlsFor) {
      this.tlsFor = tls;
      closeReplacedAgent(this.httpsAgent);
      this.httpsAgent = httpsAgentOf(tls);
    }
    return this.httpsAgent;
  }

  /** The Authorization header of the credentials in force (encoded again only when they change). */
  private authorization(): string | null {
    const auth = this.auth();
    if (auth !== this.authFor) {
      this.authFor = auth;
      this.authHeader = auth ? `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}` : null;
    }
    return this.authHeader;
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private request(method: string, apiUrl: string, path: string, body: string | null, timeoutMs: number): Promise<Reply | null> {
    const target = this.targets.of(apiUrl);
    if (target === null) return Promise.resolve(null);
    const headers: Record<string, string> = { accept: 'application/json' };
    const authorization = this.authorization();
    if (authorization) headers['authorization'] = authorization;
    if (body !== null) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    return new Promise<Reply | null>((resolve) => {
      let settled = false;
      let timer: NodeJS.Timeout | null = null;
      const done = (r: Reply | null) => {
        if (settled) return;
        settled = true;
        if (timer !== null) clearTimeout(timer);
        resolve(r);
      };
      try {
        const options: http.RequestOptions = { ...target.options, path: target.basePath + path, method, headers };
        const req = target.secure ? https.request({ ...options, agent: this.secureAgent() }) : http.request({ ...options, agent: this.httpAgent });
        // One deadline for connect, headers and body.
        timer = setTimeout(() => {
          req.destroy(new Error(`no answer within ${timeoutMs} ms`));
          done(null);
        }, Math.max(1, timeoutMs));
        timer.unref();
        req.on('error', () => done(null));
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > this.maxBodyBytes) {
              req.destroy();
              done(null);
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => done({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', () => done(null));
          res.on('aborted', () => done(null));
        });
        req.end(body ?? undefined);
      } catch {
        done(null);
      }
    });
  }
}

/** A keep-alive HTTPS agent with these TLS settings. */
function httpsAgentOf(tls: PeerTls | undefined): https.Agent {
  return new https.Agent({
    keepAlive: true,
    maxSockets: 8,
    rejectUnauthorized: tls?.rejectUnauthorized ?? true,
    ...(tls?.ca !== undefined ? { ca: tls.ca } : {}),
    ...(tls?.cert !== undefined ? { cert: tls.cert } : {}),
    ...(tls?.key !== undefined ? { key: tls.key } : {}),
  });
}
