import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Most connections one listener holds at once. Beyond it new ones are closed at once: the fds
 * stay for what the agent must keep doing (PostgreSQL, etcd, its fencer). An audit that held
 * 20,000 idle connections used them all up, and the agent took its own server for crashed.
 */
export const MAX_CONNECTIONS = 1000;

/** How long a keep-alive connection may stay idle (above common load-balancer idle timeouts). */
export const KEEP_ALIVE_MS = 65_000;

/**
 * How long a new connection may stay silent before its first request: one that never sends
 * a byte would otherwise hold its place until the process ends, and a thousand of them
 * (MAX_CONNECTIONS) locked every client out, health checks included.
 */
export const FIRST_REQUEST_MS = 10_000;

/** Longest a request may take to arrive whole, headers and body: a slow client is cut off then. */
export const REQUEST_TIMEOUT_MS = 70_000;

/** The status of a request Node could not parse: too-large headers 431, a timeout 408, otherwise 400. */
function clientErrorStatus(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

/** The JSON body of a refusal made below the routes, in the listener's error shape. */
export type ErrorBodyOf = (code: string, message: string) => unknown;

/** The agent API's error shape: `{error: <code>, message}`. */
export const AGENT_ERROR_BODY: ErrorBodyOf = (code, message) => ({ error: code, message });

/** A whole response written on the socket itself (no request object to answer through), closing the connection. */
function rawAnswer(status: number, body: unknown): string {
  const text = JSON.stringify(body);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}

/**
 * The head of `req` again, as bytes, without what asks for a protocol upgrade (the `Upgrade`
 * header and the `upgrade` token of `Connection`). The API speaks HTTP/1.1 only, so it ignores
 * an upgrade, as RFC 9110 lets a server do (`curl --http2` asks for h2c on every http:// URL).
 * Node cannot: without an 'upgrade' listener it answers the request, but its parser takes the
 * rest of the connection for the other protocol, so the next request on it never got an
 * answer, nor did a malformed chunked body (the request waited for the rest until its timeout).
 * Given back to the server (unshifted, the connection emitted anew), the request is parsed
 * again as plain HTTP/1.1, body and keep-alive included.
 */
function withoutUpgrade(req: IncomingMessage): Buffer {
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === 'upgrade') continue;
    if (lower === 'connection') {
      const kept = value.split(',').map((t) => t.trim()).filter((t) => t !== '' && t.toLowerCase() !== 'upgrade');
      if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`);
      continue;
    }
    lines.push(`${name}: ${value}`);
  }
  // Node decodes the request line and headers as latin1: encoded back the same way, every byte is as sent.
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

/** A JSON refusal through the response object, closing the connection after it. */
function refuse(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.shouldKeepAlive = false;
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text), Connection: 'close' });
  res.end(text);
}

/**
 * Sets the connection limits of an API listener, and answers as JSON (in the listener's error
 * shape, `errorBody`) what Node would otherwise answer with an empty body or not at all: a
 * request it cannot parse (a bad Content-Length, a malformed chunk: 400; headers over 16 KiB:
 * 431), an HTTP/1.1 request without `Host` (400), an `Expect` other than `100-continue` (417),
 * `CONNECT` (400, as nginx answers it; Node closed the connection without a word). Each of
 * these closes the connection. A request asking for a protocol upgrade is served as plain
 * HTTP/1.1 (see withoutUpgrade). Call it once the listener's request handler is in place: the
 * Host check runs in front of it.
 */
export function limitConnections(server: Server, keepAliveMs = KEEP_ALIVE_MS, firstRequestMs = FIRST_REQUEST_MS, errorBody: ErrorBodyOf = AGENT_ERROR_BODY): void {
  server.maxConnections = MAX_CONNECTIONS;
  // Over TLS the clock starts once the handshake is done (the socket requests arrive on); the
  // handshake has its own bound (FIRST_REQUEST_MS as handshakeTimeout where the listener is made).
  const secure = typeof (server as { setSecureContext?: unknown }).setSecureContext === 'function';
  server.on(secure ? 'secureConnection' : 'connection', (socket: Socket) => socket.setTimeout(firstRequestMs, () => socket.destroy()));

  // Node answers a missing Host with an empty 400 before any handler runs: the check moves in
  // front of the listener's handlers, which run from this one.
  (server as { requireHostHeader?: boolean }).requireHostHeader = false;
  const handlers = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  server.removeAllListeners('request');
  // Answers under way per connection (pipelined requests): an upgrade request waits for them (see the 'upgrade' listener).
  const inFlight = new WeakMap<Duplex, { count: number; idle: (() => void)[] }>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    let answers = inFlight.get(req.socket);
    if (answers === undefined) inFlight.set(req.socket, (answers = { count: 0, idle: [] }));
    const entry = answers;
    entry.count++;
    res.once('close', () => {
      if (--entry.count === 0) for (const next of entry.idle.splice(0)) next();
    });
    if (req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && req.headers.host === undefined) {
      refuse(res, 400, errorBody('invalid_request', 'malformed HTTP request (an HTTP/1.1 request needs a Host header)'));
      return;
    }
    for (const handler of handlers) handler.call(server, req, res);
  });
  // A request arrived: the connection is not silent; Node's keep-alive timeout takes over after the answer.
  server.on('request', (req: IncomingMessage) => req.socket.setTimeout(0));
  server.keepAliveTimeout = keepAliveMs;
  // Headers must be allowed to arrive a little after the idle timeout ends (Node's own advice).
  server.headersTimeout = keepAliveMs + 1000;
  server.requestTimeout = Math.max(REQUEST_TIMEOUT_MS, server.headersTimeout);

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A TLS failure (a handshake that timed out or failed) has no HTTP to answer in.
    if (err.code === 'ECONNRESET' || err.code?.startsWith('ERR_TLS') === true || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(rawAnswer(clientErrorStatus(err.code), errorBody('invalid_request', `malformed HTTP request (${err.code ?? err.message})`)));
  });
  // Without a listener Node answers 417 with an empty body.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    req.socket.setTimeout(0);
    refuse(res, 417, errorBody('expectation_failed', `unsupported Expect: ${JSON.stringify(req.headers.expect ?? '')} (only 100-continue is)`));
  });
  // Without a listener Node closes the connection of a CONNECT request without an answer.
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    // What the client sends after its request is read and dropped: unread, it kept the connection open after both sides were done.
    socket.resume();
    socket.end(rawAnswer(400, errorBody('invalid_request', `malformed HTTP request (${req.method ?? 'CONNECT'} asks for a tunnel: this is not a proxy)`)));
  });
  // An upgrade is ignored: the request is parsed again without it (see withoutUpgrade).
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const again = () => {
      if (socket.destroyed) return;
      socket.unshift(Buffer.concat([withoutUpgrade(req), head]));
      server.emit(secure ? 'secureConnection' : 'connection', socket);
    };
    // Pipelined behind a request still being answered: Node has let go of the connection, and
    // the answers would no longer leave in order; the request waits until those are sent.
    const answers = inFlight.get(socket);
    if (answers !== undefined && answers.count > 0) answers.idle.push(again);
    else again();
  });
}
