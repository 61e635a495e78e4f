import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { ResponseHeaders } from './response-headers.js';

/** Statuses that never carry a body. */
const EMPTY_STATUS = new Set([204, 205, 304]);

/** A parsed query string: a repeated parameter becomes an array (node's querystring). */
export type Query = Readonly<Record<string, string | string[] | undefined>>;

/**
 * One request to the REST API and the response being built for it, the way a route sees
 * them: method, path and query of the request, its headers; the response's status, ordered
 * headers (a name set again keeps its place, as node's `setHeader`) and body, sent once the
 * route returns. A route that writes the response itself (an event stream) sets
 * `respond = false`.
 */
export class Exchange {
  /** The response status; 404 until a route answers. */
  status = 404;
  /** The response body: bytes or text (null: none). */
  body: Buffer | string | null = null;
  /** The route writes the response itself. */
  respond = true;
  readonly headers: ResponseHeaders;
  private parsedQuery: Query | null = null;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** The path as sent (not decoded). */
    readonly path: string,
    /** The query string without `?`. */
    readonly querystring: string,
    extraHeaders: Readonly<Record<string, string>>,
  ) {
    this.headers = new ResponseHeaders(extraHeaders);
  }

  get method(): string {
    return this.req.method ?? 'GET';
  }

  /** The query string, parsed on first use. */
  get query(): Query {
    return (this.parsedQuery ??= this.querystring === '' ? {} : (parseQuery(this.querystring) as Query));
  }

  /** A request header's value, '' when absent (a repeated header joined by ', '). */
  header(name: string): string {
    const v = this.req.headers[name.toLowerCase()];
    return v === undefined ? '' : Array.isArray(v) ? v.join(', ') : v;
  }

  /** Sets a response header. */
  set(name: string, value: string): this {
    this.headers.set(name, value);
    return this;
  }

  /** Sets a body with its Content-Type; the status becomes 200 unless a route set another. */
  send(body: Buffer | string, contentType: string, status?: number): void {
    this.body = body;
    this.headers.set('Content-Type', contentType);
    this.status = status ?? (this.status === 404 ? 200 : this.status);
  }

  /** An answer without a body (204 unless said otherwise); content headers removed. */
  empty(status = 204): void {
    this.body = null;
    this.status = status;
    this.headers.remove('Content-Type').remove('Content-Length').remove('Transfer-Encoding');
  }

  /** Writes the response (once): headers with Content-Length, and the body unless HEAD or a bodiless status. */
  end(): void {
    if (!this.respond || this.res.headersSent) return;
    const res = this.res;
    if (this.body === null || EMPTY_STATUS.has(this.status)) {
      if (EMPTY_STATUS.has(this.status)) this.headers.remove('Content-Type').remove('Content-Length').remove('Transfer-Encoding');
      res.writeHead(this.status, this.headers.list());
      res.end();
      return;
    }
    const length = typeof this.body === 'string' ? Buffer.byteLength(this.body) : this.body.length;
    this.headers.set('Content-Length', String(length));
    res.writeHead(this.status, this.headers.list());
    if (this.method === 'HEAD') res.end();
    else res.end(this.body);
  }
}
