import { readFile } from 'node:fs/promises';
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { WebTlsConfig } from '../../domain/collectors/web-config.js';

/** Server options for node:https, and the per-connection client certificate rule node cannot express. */
export interface ExporterTls {
  readonly options: HttpsServerOptions;
  /** False for a connection the client_auth_type refuses (it is then closed). */
  accept(socket: TLSSocket): boolean;
}

/**
 * Reads the certificate, key and client CA named by the web configuration and maps
 * client_auth_type: RequireAndVerifyClientCert is checked by OpenSSL in the handshake;
 * RequireAnyClientCert (a certificate, not verified) and VerifyClientCertIfGiven (verified when
 * given) are checked on each new connection.
 */
export async function exporterTls(cfg: WebTlsConfig): Promise<ExporterTls> {
  const [cert, key, ca] = await Promise.all([
    cfg.cert ?? readFile(cfg.certFile!, 'utf8'),
    cfg.key ?? readFile(cfg.keyFile!, 'utf8'),
    cfg.clientCa ?? (cfg.clientCaFile ? readFile(cfg.clientCaFile, 'utf8') : undefined),
  ]);
  const type = cfg.clientAuthType;
  const options: HttpsServerOptions = {
    cert,
    key,
    ...(ca ? { ca } : {}),
    requestCert: type !== 'NoClientCert',
    rejectUnauthorized: type === 'RequireAndVerifyClientCert',
    minVersion: cfg.minVersion,
    ...(cfg.maxVersion ? { maxVersion: cfg.maxVersion } : {}),
    ...(cfg.ciphers ? { ciphers: cfg.ciphers.join(':') } : {}),
    honorCipherOrder: cfg.preferServerCipherSuites,
    ...(cfg.curves ? { ecdhCurve: cfg.curves.join(':') } : {}),
  };
  const hasCert = (s: TLSSocket) => Object.keys(s.getPeerCertificate() ?? {}).length > 0;
  const accept =
    type === 'RequireAnyClientCert' ? hasCert : type === 'VerifyClientCertIfGiven' ? (s: TLSSocket) => !hasCert(s) || s.authorized : () => true;
  return { options, accept };
}
