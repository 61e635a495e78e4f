/** Throw-away PKI for the TLS tests: a CA, a server cert for 127.0.0.1 and a client cert, made with the openssl CLI. */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** PEM file paths. */
export interface TestPki {
  readonly dir: string;
  readonly caFile: string;
  readonly serverCertFile: string;
  readonly serverKeyFile: string;
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
  /** A client certificate without a common name (subject O=warden), as etcd's gateway needs one with authentication on. */
  readonly noCnCertFile: string;
  readonly noCnKeyFile: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    throw new Error(
      err.code === 'ENOENT' ? 'openssl not found: install it (apt-get install openssl) to run the TLS tests' : `openssl ${args[0]} failed: ${err.stderr ?? err.message}`,
    );
  }
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

/** Creates the CA and the two leaf certificates in a new temp dir. */
export async function makeTestPki(): Promise<TestPki> {
  const dir = await mkdtemp(join(tmpdir(), 'warden-pki-'));
  await openssl(['req', '-x509', ...EC, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=warden-test-ca'], dir);
  const leaf = async (name: string, cn: string, ext: string, subject = `/CN=${cn}`) => {
    await writeFile(join(dir, `${name}.ext`), ext);
    await openssl(['req', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject], dir);
    await openssl(
      ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`],
      dir,
    );
  };
  await leaf('server', '127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  await leaf('client', 'warden', 'extendedKeyUsage=clientAuth\n');
  await leaf('client-nocn', '', 'extendedKeyUsage=clientAuth\n', '/O=warden');
  return {
    dir,
    caFile: join(dir, 'ca.crt'),
    serverCertFile: join(dir, 'server.crt'),
    serverKeyFile: join(dir, 'server.key'),
    clientCertFile: join(dir, 'client.crt'),
    clientKeyFile: join(dir, 'client.key'),
    noCnCertFile: join(dir, 'client-nocn.crt'),
    noCnKeyFile: join(dir, 'client-nocn.key'),
  };
}
