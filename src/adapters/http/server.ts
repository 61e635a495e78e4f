import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { SecureContextOptions } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { VerifyClient } from './auth.js';
import { FIRST_REQUEST_MS, limitConnections } from './connection-limits.js';

/** HTTPS settings (`restapi.certfile`, `keyfile`, `keyfile_password`, `cafile`, `verify_client`). */
export interface TlsSettings {
  readonly certfile: string;
  /** Default: the key is in certfile. */
  readonly keyfile?: string;
  readonly keyfilePassword?: string;
  readonly cafile?: string;
  readonly verifyClient?: VerifyClient;
}

/** Options of the API listener. */
export interface AgentServerOptions {
  /** `host:port` (`restapi.listen`); port 0 picks a free one. */
  readonly listen: string;
  readonly tls?: TlsSettings;
  /** How long an idle keep-alive connection stays open (default 65 s, above common load-balancer idle timeouts). */
  readonly keepAliveTimeoutMs?: number;
}

/** A running (or ready to run) API listener. */
export interface AgentServer {
  readonly server: Server;
  /** Starts listening; resolves with the bound address. */
  listen(): Promise<AddressInfo>;
  /** Stops accepting, closes idle connections, and ends the rest after `graceMs` (default 2000). */
  close(graceMs?: number): Promise<void>;
  /** `http(s)://host:port` once listening. */
  url(): string;
  /**
   * Reads the certificate, key and CA files of `tls` again (a certificate renewed in place, or
   * other files) for every new connection; open ones keep theirs. Nothing for a plain HTTP
   * listener. Throws when a file cannot be read or the key does not fit: the files in force stay.
   */
  reloadTls(tls: TlsSettings): void;
}

/** The certificate, key and CA of `tls`, read from their files now. */
function secureContextOf(tls: TlsSettings): SecureContextOptions {
  return {
    cert: readFileSync(tls.certfile),
    key: readFileSync(tls.keyfile ?? tls.certfile),
    ...(tls.keyfilePassword !== undefined ? { passphrase: tls.keyfilePassword } : {}),
    ...(tls.cafile ? { ca: readFileSync(tls.cafile) } : {}),
  };
}

/** Splits `host:port`, IPv6 hosts in brackets. */
export function splitListen(listen: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(listen.trim());
  if (!m) throw new TypeError(`expected host:port, got ${JSON.stringify(listen)}`);
  return { host: m[1] ?? m[2] ?? '', port: Number(m[3]) };
}

/**
 * The HTTP/1.1 listener of the agent API: keep-alive with a generous idle timeout (load
 * balancers poll health paths on persistent connections), HTTPS when certfile is set, and
 * client certificates per `verify_client`: `required` refuses the TLS handshake without a
 * valid one; `optional` asks for one and leaves the decision to the access check (403 on
 * unsafe endpoints).
 */
export function createAgentServer(handler: (req: IncomingMessage, res: ServerResponse) => void, opts: AgentServerOptions): AgentServer {
  const { host, port } = splitListen(opts.listen);
  const tls = opts.tls;
  const server: Server = tls
    ? createHttpsServer(
        {
          ...secureContextOf(tls),
          requestCert: (tls.verifyClient ?? 'none') !== 'none',
          rejectUnauthorized: tls.verifyClient === 'required',
          handshakeTimeout: FIRST_REQUEST_MS,
        },
        handler,
      )
    : createHttpServer(handler);
  limitConnections(server, opts.keepAliveTimeoutMs);
  let bound: AddressInfo | null = null;

  return {
    server,
    listen: () =>
      new Promise<AddressInfo>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.once('error', onError);
        server.listen(port, host || undefined, () => {
          server.off('error', onError);
          bound = server.address() as AddressInfo;
          resolve(bound);
        });
      }),
    close: (graceMs = 2000) =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      }),
    url: () => {
      if (!bound) throw new Error('the API server is not listening');
      const h = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
      return `${tls ? 'https' : 'http'}://${h}:${bound.port}`;
    },
    reloadTls: (next) => {
      if (tls) (server as HttpsServer).setSecureContext(secureContextOf(next));
    },
  };
}
