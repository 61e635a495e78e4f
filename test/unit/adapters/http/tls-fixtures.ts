import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** PEM files of a throwaway CA, a server certificate for 127.0.0.1, and a client certificate. */
export interface TlsFiles {
  readonly dir: string;
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** Reads a file of the set. */
  read(path: string): Buffer;
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** Creates the certificates with openssl in a temp directory (EC keys: fast to generate). */
export function makeTlsFiles(): TlsFiles {
  const dir = mkdtempSync(join(tmpdir(), 'warden-tls-'));
  const key = (name: string) => openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', name], dir);
  key('ca.key');
  openssl(['req', '-x509', '-new', '-key', 'ca.key', '-subj', '/CN=warden-test-ca', '-days', '2', '-out', 'ca.pem'], dir);
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  writeFileSync(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const who of ['server', 'client']) {
    key(`${who}.key`);
    openssl(['req', '-new', '-key', `${who}.key`, '-subj', `/CN=${who}`, '-out', `${who}.csr`], dir);
    openssl(['x509', '-req', '-in', `${who}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', `${who}.ext`, '-out', `${who}.pem`], dir);
  }
  return {
    dir,
    caCert: join(dir, 'ca.pem'),
    serverCert: join(dir, 'server.pem'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.pem'),
    clientKey: join(dir, 'client.key'),
    read: (p) => readFileSync(p),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
