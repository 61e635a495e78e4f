import { execFileSync } from 'node:child_process';
import { chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PG_OS_USER } from './postgres-server.js';

/** A CA, a server certificate it signed for the name db.invalid (not the 127.0.0.1 the tests connect to), and a CA that signed nothing. */
export function makeCertificates(dir: string): void {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=warden test CA');
  openssl('req', '-x509', ...ec, '-keyout', 'other-ca.key', '-out', 'other-ca.crt', '-days', '2', '-subj', '/CN=another CA');
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=db.invalid');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:db.invalid\n');
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.ext');
  // PostgreSQL reads its key only when the server's user owns it and no one else may read it.
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(execFileSync('id', [flag, PG_OS_USER]).toString().trim());
    for (const f of ['server.crt', 'server.key']) chownSync(join(dir, f), id('-u'), id('-g'));
  }
}
