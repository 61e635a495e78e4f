import { readFileSync, statSync } from 'node:fs';
import type { Problem } from '../../domain/errors.js';

/** libpq's sslmode values, weakest first. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/**
 * The TLS parameters of a connection URL and the environment variable libpq reads when the URL
 * leaves one out. node-postgres reads only PGSSLMODE, and gives it its own meaning.
 */
const SSL_PARAMS = { sslmode: 'PGSSLMODE', sslrootcert: 'PGSSLROOTCERT', sslcert: 'PGSSLCERT', sslkey: 'PGSSLKEY' } as const;
type SslParam = keyof typeof SSL_PARAMS;
const FILE_PARAMS: readonly SslParam[] = ['sslrootcert', 'sslcert', 'sslkey'];

/** What node-postgres says when a server answers a TLS request with "no". */
const NO_TLS_ON_SERVER = /server does not support SSL/i;

type Env = Readonly<Record<string, string | undefined>>;

/** Each TLS parameter in force: the URL's, else its environment variable's, with where it came from. */
function sslParams(url: URL | null, env: Env): Map<SslParam, { value: string; from: string }> {
  const out = new Map<SslParam, { value: string; from: string }>();
  for (const [param, variable] of Object.entries(SSL_PARAMS) as [SslParam, string][]) {
    const inUrl = url?.searchParams.get(param);
    if (inUrl !== null && inUrl !== undefined) out.set(param, { value: inUrl, from: param });
    else if (env[variable]) out.set(param, { value: env[variable]!, from: variable });
  }
  return out;
}

/** The sslmode in force for `url` (absent: the PG* environment), or null when none is set. */
export function sslModeOf(url: string | undefined, env: Env): string | null {
  return sslParams(url ? new URL(url) : null, env).get('sslmode')?.value ?? null;
}

/**
 * Problems libpq would refuse the TLS settings for, found at start rather than at each
 * connection: an sslmode it does not know, verify-ca without the CA to verify with, a
 * certificate or key file that cannot be read. `where` names the URL in the problems; a
 * setting from the environment is named by its variable.
 */
export function pgSslProblems(url: string | undefined, env: Env, where: string): Problem[] {
  let parsed: URL | null = null;
  if (url) {
    try {
      parsed = new URL(url);
    } catch {
      return [];
    }
  }
  const params = sslParams(parsed, env);
  const problems: Problem[] = [];
  const at = (from: string) => (from.startsWith('PG') ? from : where);
  const mode = params.get('sslmode');
  if (mode && !(SSL_MODES as readonly string[]).includes(mode.value)) {
    const hint = mode.value === 'no-verify' ? ' (for an encrypted connection without certificate checks, use require)' : '';
    problems.push({ path: at(mode.from), message: `sslmode ${JSON.stringify(mode.value)} is not one of ${SSL_MODES.join(', ')}${hint}` });
  }
  if (mode?.value === 'verify-ca' && !params.has('sslrootcert')) {
    problems.push({ path: at(mode.from), message: 'sslmode=verify-ca needs sslrootcert: the file of the CA certificate that signed the server certificate' });
  }
  for (const param of FILE_PARAMS) {
    const p = params.get(param);
    if (!p) continue;
    const why = pemFileProblem(p.value);
    if (why !== null) problems.push({ path: at(p.from), message: `cannot read ${param} ${p.value}: ${why}` });
  }
  return problems;
}

/** Largest certificate or key file read: a bundle of many CA certificates is far smaller. */
const PEM_FILE_MAX_BYTES = 1024 * 1024;

/**
 * Why a certificate or key file cannot be used, or null. node-postgres reads these files whole
 * at every connection: a device such as /dev/zero would fill the memory and a named pipe would
 * block the process, so only a regular file of sensible size is read.
 */
function pemFileProblem(path: string): string | null {
  try {
    const st = statSync(path);
    if (!st.isFile()) return 'not a regular file';
    if (st.size > PEM_FILE_MAX_BYTES) return `it holds more than ${PEM_FILE_MAX_BYTES / 1024 / 1024} MiB, which is no certificate or key file`;
    readFileSync(path);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/** What node-postgres is given to connect. */
export interface PgConnectionConfig {
  readonly connectionString?: string;
  readonly database?: string;
}

/**
 * The connection settings of `url` (absent: node-postgres reads the PG* environment) on
 * `database` (absent: the URL's), with TLS as libpq means it. node-postgres alone checks the
 * certificate and host name for every sslmode but disable, so `require` fails on a certificate
 * of a private CA; its libpq-compatible mode gives each mode libpq's meaning (require: encrypted,
 * not verified, or verified like verify-ca when sslrootcert is given; verify-ca: the chain, not
 * the name; verify-full: both). `allow` connects without TLS, which is what libpq tries first;
 * `plain` does so whatever the mode (the fallback of `prefer` when the server offers no TLS).
 */
export function pgConnectionConfig(url: string | undefined, env: Env, database?: string, plain = false): PgConnectionConfig {
  const u = new URL(url ?? 'postgres://');
  const params = sslParams(url ? u : null, env);
  // Nothing to add: node-postgres reads the URL, or the environment, as it always did.
  if (params.size === 0 && !plain) {
    if (url) return { connectionString: database ? urlWithDatabase(url, database) : url };
    return database ? { database } : {};
  }
  if (database) u.pathname = `/${encodeURIComponent(database)}`;
  for (const [param, { value }] of params) u.searchParams.set(param, value);
  // The exporter always speaks libpq's meaning: a URL that asks for it again (or not) is not an error.
  u.searchParams.delete('uselibpqcompat');
  const mode = params.get('sslmode')?.value;
  if (plain || mode === 'allow') u.searchParams.set('sslmode', 'disable');
  u.searchParams.set('uselibpqcompat', 'true');
  return { connectionString: u.toString() };
}

/** True for the error node-postgres raises when the server has TLS off (the one case `prefer` falls back on). */
export function isNoTlsOnServer(e: unknown): boolean {
  return NO_TLS_ON_SERVER.test(String((e as { message?: unknown })?.message ?? ''));
}

/** The same PostgreSQL URL pointing at another database. */
export function urlWithDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}
