import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import type { Problem } from '../../domain/errors.js';
import type { WebTlsConfig } from '../../domain/collectors/web-config.js';

/**
 * Whether the web configuration's certificate, key and client CA can be read and make a TLS
 * context, as listening needs: a key of another certificate or an unreadable file is a
 * configuration problem listed at start with the others (exit 2), not a failed listen.
 */
export function webTlsProblems(tls: WebTlsConfig, source: string): Problem[] {
  const path = `${source}.tls_server_config`;
  const problems: Problem[] = [];
  const read = (file: string | undefined, key: string): string | undefined => {
    if (file === undefined) return undefined;
    try {
      return readFileSync(file, 'utf8');
    } catch (e) {
      problems.push({ path: `${path}.${key}`, message: `expected a readable file, got ${JSON.stringify(file)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` });
      return undefined;
    }
  };
  const cert = tls.cert ?? read(tls.certFile, 'cert_file');
  const key = tls.key ?? read(tls.keyFile, 'key_file');
  const ca = tls.clientCa ?? read(tls.clientCaFile, 'client_ca_file');
  if (problems.length > 0 || cert === undefined || key === undefined) return problems;
  try {
    createSecureContext({ cert, key, ...(ca !== undefined ? { ca } : {}) });
  } catch (e) {
    const why = (e as Error).message;
    const at = /key/i.test(why) ? 'key_file' : 'cert_file';
    problems.push({ path: `${path}.${at}`, message: `expected a certificate and a private key that go together${ca !== undefined ? ', and a client CA in PEM' : ''}, got an error: ${why}` });
  }
  return problems;
}
