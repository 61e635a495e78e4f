import { createSecureContext } from 'node:tls';
import { readBounded } from '../yaml-read.js';
import type { Problem } from '../../domain/errors.js';
import type { WebTlsConfig } from '../../domain/collectors/web-config.js';

/** How much a certificate, key or CA file may hold. */
const PEM_FILE_MAX_BYTES = 1024 * 1024;

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
      // A PEM file is a few KiB: one that never ends (/dev/zero) must not fill the memory.
      const read = readBounded(file, PEM_FILE_MAX_BYTES);
      if (read.whole) return read.bytes.toString('utf8');
      problems.push({ path: `${path}.${key}`, message: `expected a PEM file, got ${JSON.stringify(file)}, which holds more than ${PEM_FILE_MAX_BYTES / 1024 / 1024} MiB` });
      return undefined;
    } catch (e) {
      problems.push({ path: `${path}.${key}`, message: `expected a readable file, got ${JSON.stringify(file)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` });
      return undefined;
    }
  };
  const cert = tls.cert ?? read(tls.certFile, 'cert_file');
  const key = tls.key ?? read(tls.keyFile, 'key_file');
  const ca = tls.clientCa ?? read(tls.clientCaFile, 'client_ca_file');
  // Node takes an empty certificate or key (or any text without a PEM block) without a word, and
  // then serves HTTPS that no client can complete: each must hold a PEM block.
  for (const [text, key_, inline] of [[cert, 'cert_file', tls.cert !== undefined], [key, 'key_file', tls.key !== undefined], [ca, 'client_ca_file', tls.clientCa !== undefined]] as const) {
    if (text !== undefined && !/-----BEGIN [A-Z0-9 ]+-----/.test(text)) {
      const name = inline ? key_.replace(/_file$/, '') : key_;
      problems.push({ path: `${path}.${name}`, message: `expected PEM (-----BEGIN ...-----), got ${text.trim() === '' ? 'nothing' : 'text without a PEM block'}` });
    }
  }
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
