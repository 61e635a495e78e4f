import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
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

/**
 * Sets the connection limits of an API listener, and answers a request Node cannot parse (a
 * bad Content-Length, a malformed chunk, headers over 16 KiB) with a JSON error like every
 * other refusal, instead of an empty 400, then closes the connection.
 */
export function limitConnections(server: Server, keepAliveMs = KEEP_ALIVE_MS, firstRequestMs = FIRST_REQUEST_MS): void {
  server.maxConnections = MAX_CONNECTIONS;
  // Over TLS the clock starts once the handshake is done (the socket requests arrive on); the
  // handshake has its own bound (FIRST_REQUEST_MS as handshakeTimeout where the listener is made).
  const secure = typeof (server as { setSecureContext?: unknown }).setSecureContext === 'function';
  server.on(secure ? 'secureConnection' : 'connection', (socket: Socket) => socket.setTimeout(firstRequestMs, () => socket.destroy()));
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
    const status = clientErrorStatus(err.code);
    const body = JSON.stringify({ error: 'invalid_request', message: `malformed HTTP request (${err.code ?? err.message})` });
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  });
}
