import http from 'node:http';
import https from 'node:https';
import { RestUnreachableError } from './errors.js';

/** HTTP methods wardenctl sends. */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** An HTTP answer: status code and the parsed JSON body (the raw text when it is not JSON). */
export interface RestResponse {
  readonly status: number;
  readonly body: unknown;
}

/** Options of one request. */
export interface RestRequestOptions {
  /** Give up (RestUnreachableError) after this long without a full answer. */
  readonly timeoutMs?: number;
}

/** The agents' REST API as wardenctl calls it. */
export interface RestClient {
  /** Sends one request to `<apiUrl><path>`; any HTTP status resolves. Throws RestUnreachableError when no answer arrives. */
  request(apiUrl: string, method: HttpMethod, path: string, body?: unknown, opts?: RestRequestOptions): Promise<RestResponse>;
  /**
   * Reads a Server-Sent Events stream (`GET <apiUrl><path>`, resuming after `lastEventId`),
   * calling `onData` with each message's data, until the stream ends (resolves) or fails
   * (throws); `signal` ends it. Absent on clients that cannot stream.
   */
  stream?(apiUrl: string, path: string, lastEventId: string | null, signal: AbortSignal, onData: (data: string) => void): Promise<void>;
}

/** TLS and authentication settings of the HTTP client. */
export interface RestClientOptions {
  readonly username?: string;
  readonly password?: string;
  /** PEM text of the CA that signed the agents' certificates. */
  readonly ca?: string;
  /** PEM client certificate and key, for agents with `verify_client`. */
  readonly cert?: string;
  readonly key?: string;
  /** Skip server certificate verification. */
  readonly insecure?: boolean;
  /** Default timeout of a request. */
  readonly timeoutMs?: number;
}

/** Default timeout: long enough for a switchover, which the API answers only once it is done. */
export const DEFAULT_REST_TIMEOUT_MS = 90_000;

/** RestClient over node:http/https (https for the TLS options fetch lacks: CA, client cert). */
export class HttpRestClient implements RestClient {
  constructor(private readonly opts: RestClientOptions = {}) {}

  stream(apiUrl: string, path: string, lastEventId: string | null, signal: AbortSignal, onData: (data: string) => void): Promise<void> {
    const url = new URL(path, apiUrl.endsWith('/') ? apiUrl : apiUrl + '/');
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (lastEventId !== null) headers['last-event-id'] = lastEventId;
    if (this.opts.username !== undefined) headers['authorization'] = `Basic ${Buffer.from(`${this.opts.username}:${this.opts.password ?? ''}`).toString('base64')}`;
    const target = `GET ${url.origin}${url.pathname}`;
    return new Promise<void>((resolve, reject) => {
      const isHttps = url.protocol === 'https:';
      const options: https.RequestOptions = { method: 'GET', headers, signal };
      if (isHttps) {
        if (this.opts.ca) options.ca = this.opts.ca;
        if (this.opts.cert) options.cert = this.opts.cert;
        if (this.opts.key) options.key = this.opts.key;
        options.rejectUnauthorized = !this.opts.insecure;
      }
      const req = (isHttps ? https : http).request(url, options, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new RestUnreachableError(target, `HTTP ${res.statusCode}`));
        }
        res.setEncoding('utf8');
        let buffer = '';
        let data: string[] = [];
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl).replace(/\r$/, '');
            buffer = buffer.slice(nl + 1);
            if (line === '') {
              if (data.length) onData(data.join('\n'));
              data = [];
            } else if (line.startsWith('data:')) {
              data.push(line.slice(5).replace(/^ /, ''));
            }
          }
        });
        res.on('end', () => resolve());
        res.on('error', (e) => (signal.aborted ? resolve() : reject(new RestUnreachableError(target, e.message))));
      });
      req.on('error', (e) => (signal.aborted ? resolve() : reject(new RestUnreachableError(target, e.message))));
      req.end();
    });
  }

  /** Sends one request; Basic auth goes on every request when configured. */
  request(apiUrl: string, method: HttpMethod, path: string, body?: unknown, ropts: RestRequestOptions = {}): Promise<RestResponse> {
    const url = new URL(path, apiUrl.endsWith('/') ? apiUrl : apiUrl + '/');
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { accept: 'application/json' };
    if (payload) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(payload.length);
    }
    if (this.opts.username !== undefined) {
      const token = Buffer.from(`${this.opts.username}:${this.opts.password ?? ''}`).toString('base64');
      headers['authorization'] = `Basic ${token}`;
    }
    const timeoutMs = ropts.timeoutMs ?? this.opts.timeoutMs ?? DEFAULT_REST_TIMEOUT_MS;
    const target = `${method} ${url.origin}${url.pathname}`;
    return new Promise<RestResponse>((resolve, reject) => {
      const isHttps = url.protocol === 'https:';
      const options: https.RequestOptions = { method, headers, timeout: timeoutMs };
      if (isHttps) {
        if (this.opts.ca) options.ca = this.opts.ca;
        if (this.opts.cert) options.cert = this.opts.cert;
        if (this.opts.key) options.key = this.opts.key;
        options.rejectUnauthorized = !this.opts.insecure;
      }
      const req = (isHttps ? https : http).request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (e) => reject(new RestUnreachableError(target, e.message)));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: parseBody(Buffer.concat(chunks).toString('utf8')) }));
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs < 1000 ? `${timeoutMs}ms` : `${Math.round(timeoutMs / 1000)}s`}`)));
      req.on('error', (e: NodeJS.ErrnoException) => reject(new RestUnreachableError(target, e.code && !e.message.includes(e.code) ? `${e.code} ${e.message}` : e.message)));
      req.end(payload);
    });
  }
}

function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The human part of a response body: `message`, else `error`, else the body itself. */
export function responseMessage(res: RestResponse): string {
  const b = res.body;
  if (b && typeof b === 'object' && !Array.isArray(b)) {
    const o = b as Record<string, unknown>;
    if (typeof o['message'] === 'string') return o['message'];
    if (typeof o['error'] === 'string') return o['error'];
  }
  if (typeof b === 'string') return b.trim();
  return b === null ? `HTTP ${res.status}` : JSON.stringify(b);
}
