import { accessSync, constants, statSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { dirname } from 'node:path';
import { defaultRunAsUser } from '../../adapters/database/pg-options.js';
import { checkPostgresSetup } from '../../adapters/database/pg-preflight.js';
import { stringify } from 'yaml';
import type { Problem } from '../../domain/errors.js';
import type { LocalConfig } from './local-config.js';
import { DEFAULT_DB_BIN_DIR, defaultLogDir, LocalConfigError } from './local-config-types.js';
import { readBounded } from '../yaml-read.js';

/** How much a certificate or key file may hold: a PEM file is a few KiB. */
const PEM_MAX_BYTES = 1024 * 1024;

/** A PEM file's text; a string problem when it is larger than any PEM file (/dev/zero) or holds no PEM block (/dev/null). */
function pemText(file: string): { text: string } | { problem: string } {
  let read: { bytes: Buffer; whole: boolean };
  try {
    read = readBounded(file, PEM_MAX_BYTES);
  } catch (e) {
    return { problem: `expected a readable file, got ${JSON.stringify(file)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
  if (!read.whole) return { problem: `expected a PEM file, got ${JSON.stringify(file)}, which holds more than 1 MiB` };
  const text = read.bytes.toString('utf8');
  // Node takes an empty certificate or key without a word, and then serves HTTPS no client can complete.
  if (!/-----BEGIN [A-Z0-9 ]+-----/.test(text)) return { problem: `expected PEM (-----BEGIN ...-----) in ${JSON.stringify(file)}, got ${text.trim() === '' ? 'nothing' : 'text without a PEM block'}` };
  return { text };
}

function readable(path: string): string | null {
  try {
    accessSync(path, constants.R_OK);
    return null;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? (e as Error).message;
  }
}

/**
 * Why the agent could not open `file` for its log, or null. The logger creates missing
 * directories, so what counts is the nearest folder that exists: a directory the agent may
 * write in (a file in a folder's place, or a read-only folder, fails the start).
 */
function logFileProblem(file: string): string | null {
  let dir = dirname(file);
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(dir).isDirectory();
    } catch {
      const parent = dirname(dir);
      if (parent === dir) return null;
      dir = parent;
      continue;
    }
    if (!isDir) return `expected ${dir} to be a directory (the log file's folder is created under it), got a file`;
    try {
      accessSync(dir, constants.W_OK | constants.X_OK);
      return null;
    } catch (e) {
      return `expected ${dir} to be writable by the agent (the log file or its folder is created there), got ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
    }
  }
}

/**
 * Whether the REST API's certificate, key and key password make a TLS context, as the start
 * needs (a wrong password or a key of another certificate fails only there otherwise). Not
 * checked when a file was already reported unreadable.
 */
function restApiTlsProblem(config: LocalConfig, reported: readonly Problem[]): Problem | null {
  const r = config.restapi;
  if (r.certfile === undefined || reported.some((p) => p.path === 'restapi.certfile' || p.path === 'restapi.keyfile')) return null;
  try {
    const cert = pemText(r.certfile);
    if ('problem' in cert) return { path: 'restapi.certfile', message: cert.problem };
    const key = r.keyfile === undefined ? cert : pemText(r.keyfile);
    if ('problem' in key) return { path: 'restapi.keyfile', message: key.problem };
    createSecureContext({
      cert: cert.text,
      key: key.text,
      ...(r.keyfile_password !== undefined ? { passphrase: r.keyfile_password } : {}),
    });
    return null;
  } catch (e) {
    const why = (e as Error).message;
    const path = /decrypt|passphrase|password/i.test(why) ? 'restapi.keyfile_password' : 'restapi.keyfile';
    return { path, message: `expected a key that goes with restapi.certfile${r.keyfile_password !== undefined ? ' and opens with keyfile_password' : ''}, got an error: ${why}` };
  }
}

/**
 * What `warden --validate-config` checks on this host beyond the file itself: the TLS and
 * CA files can be read, the log file's directory exists, and PostgreSQL can run as the agent
 * would run it (the checks every start makes: programs in `db.bin_dir`, the server's user,
 * the data and log directories). Each problem names the key.
 */
export async function hostProblems(config: LocalConfig): Promise<Problem[]> {
  const out: Problem[] = [];
  const files: [string, string | undefined][] = [
    ['restapi.certfile', config.restapi.certfile],
    ['restapi.keyfile', config.restapi.keyfile],
    ['restapi.cafile', config.restapi.cafile],
    ['etcd3.cacert', config.etcd3.cacert],
    ['etcd3.cert', config.etcd3.cert],
    ['etcd3.key', config.etcd3.key],
  ];
  for (const [path, file] of files) {
    if (file === undefined) continue;
    const why = readable(file);
    if (why) out.push({ path, message: `expected a readable file, got ${JSON.stringify(file)} (${why})` });
  }
  const tlsProblem = restApiTlsProblem(config, out);
  if (tlsProblem) out.push(tlsProblem);
  if (config.log.file !== null) {
    const why = logFileProblem(config.log.file);
    if (why) out.push({ path: 'log.file', message: why });
  }
  out.push(...(await checkPostgresSetup({ binDir: config.db.bin_dir, dataDir: config.db.data_dir, logDir: config.db.log_dir, runAsUser: defaultRunAsUser() })));
  return out;
}

/**
 * The machine checks a start makes (programs in `db.bin_dir`, the server's user, the data and
 * log directories), for a file that has problems of its own: run on the `db` values that are
 * usable, so that one start lists every problem instead of one kind per attempt.
 */
export async function hostProblemsOfDocument(doc: Readonly<Record<string, unknown>>): Promise<Problem[]> {
  const db = doc['db'];
  if (db === null || typeof db !== 'object' || Array.isArray(db)) return [];
  const { bin_dir: binDir, data_dir: dataDir, log_dir: logDir } = db as Record<string, unknown>;
  if (typeof dataDir !== 'string' || dataDir === '') return [];
  return checkPostgresSetup({
    binDir: typeof binDir === 'string' && binDir !== '' ? binDir : DEFAULT_DB_BIN_DIR,
    dataDir,
    logDir: typeof logDir === 'string' && logDir !== '' ? logDir : defaultLogDir(dataDir),
    runAsUser: defaultRunAsUser(),
  });
}

/** `e` with the machine checks of its file added (see hostProblemsOfDocument); `e` itself when they find nothing more. */
export async function withHostProblems(e: LocalConfigError): Promise<LocalConfigError> {
  if (!e.document) return e;
  const seen = new Set(e.problems.map((p) => p.path));
  const host = (await hostProblemsOfDocument(e.document).catch(() => [])).filter((p) => !seen.has(p.path));
  return host.length ? new LocalConfigError(`${e.source} (also checked on this machine)`, [...e.problems, ...host]) : e;
}

const SECRET_KEYS = new Set(['password', 'keyfile_password']);

/** The effective configuration (defaults and environment applied) as YAML, with passwords masked. */
export function effectiveConfigYaml(config: LocalConfig): string {
  const mask = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(mask);
    if (v === null || typeof v !== 'object') return v;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, SECRET_KEYS.has(k) && typeof x === 'string' ? '********' : mask(x)]));
  };
  return stringify(mask(config));
}
