import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { foreignEntries } from './data-directory.js';
import type { Problem } from '../../domain/errors.js';
import { osUserIds } from './owned-files.js';
import { runCommand } from './run-command.js';

/** Programs the agent runs from `bin_dir`. */
export const REQUIRED_PROGRAMS = ['postgres', 'pg_ctl', 'initdb', 'pg_controldata', 'pg_basebackup', 'pg_rewind'] as const;

/** What the checks look at: the `db` section of the local configuration, as the agent will use it. */
export interface PreflightTarget {
  readonly binDir: string;
  readonly dataDir: string;
  /** Directory of the server log. */
  readonly logDir: string;
  /** OS user the server runs as (the agent runs as root), or null when the server runs as the agent's own user. */
  readonly runAsUser: string | null;
}

/** The nearest existing ancestor of `path` (itself when it exists). */
async function nearestExisting(path: string): Promise<string> {
  let p = resolve(path);
  for (;;) {
    if (await stat(p).then(() => true, () => false)) return p;
    const up = dirname(p);
    if (up === p) return p;
    p = up;
  }
}

const accessible = (path: string, mode: number) => access(path, mode).then(() => true, () => false);

/** The binaries: each program present and executable; `postgres -V` runs (as the server's user) and names the major version. */
async function checkBinaries(t: PreflightTarget, problems: Problem[]): Promise<number | null> {
  const dir = await stat(t.binDir).catch(() => null);
  if (!dir?.isDirectory()) {
    problems.push({ path: 'db.bin_dir', message: `${t.binDir} is not a directory: set it to where the PostgreSQL programs are (e.g. /usr/lib/postgresql/15/bin)` });
    return null;
  }
  const missing: string[] = [];
  for (const p of REQUIRED_PROGRAMS) if (!(await accessible(join(t.binDir, p), constants.X_OK))) missing.push(p);
  if (missing.length) {
    problems.push({ path: 'db.bin_dir', message: `${t.binDir} lacks ${missing.join(', ')} (or they are not executable): every one of ${REQUIRED_PROGRAMS.join(', ')} is needed` });
    if (missing.includes('postgres')) return null;
  }
  try {
    const { stdout } = await runCommand(join(t.binDir, 'postgres'), ['-V'], { runAs: t.runAsUser, timeoutMs: 10_000 });
    const m = /PostgreSQL\)? (\d+)/.exec(stdout);
    if (!m) problems.push({ path: 'db.bin_dir', message: `${join(t.binDir, 'postgres')} -V printed ${JSON.stringify(stdout.trim())}, not a PostgreSQL version` });
    return m ? Number(m[1]) : null;
  } catch (e) {
    const who = t.runAsUser ? ` as user ${t.runAsUser}` : '';
    problems.push({ path: 'db.bin_dir', message: `${join(t.binDir, 'postgres')} does not run${who}: ${(e as Error).message.split('\n')[0]}` });
    return null;
  }
}

/** The server's OS user exists; its uid, or this process's own when the server runs as it. */
async function serverUid(t: PreflightTarget, problems: Problem[]): Promise<number | null> {
  if (t.runAsUser === null) return process.getuid?.() ?? null;
  try {
    return (await osUserIds(t.runAsUser)).uid;
  } catch {
    problems.push({ path: 'db.data_dir', message: `the agent runs as root and runs PostgreSQL as the OS user ${t.runAsUser}, which does not exist: create it (useradd --system ${t.runAsUser})` });
    return null;
  }
}

/**
 * An existing data directory is a directory the server's user owns, with the permissions
 * PostgreSQL accepts, and data of the binaries' major version; a missing one can be created.
 */
async function checkDataDir(t: PreflightTarget, uid: number | null, major: number | null, problems: Problem[]): Promise<void> {
  const st = await stat(t.dataDir).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? null : e));
  if (st instanceof Error) {
    problems.push({ path: 'db.data_dir', message: `${t.dataDir} cannot be read: ${st.message}` });
    return;
  }
  if (st === null) {
    const base = await nearestExisting(t.dataDir);
    if (!(await accessible(base, constants.W_OK))) problems.push({ path: 'db.data_dir', message: `${t.dataDir} does not exist and ${base} is not writable, so it cannot be created` });
    return;
  }
  if (!st.isDirectory()) {
    problems.push({ path: 'db.data_dir', message: `${t.dataDir} is not a directory` });
    return;
  }
  if (!(await accessible(t.dataDir, constants.R_OK | constants.X_OK))) problems.push({ path: 'db.data_dir', message: `${t.dataDir} is not readable by the agent` });
  if (uid !== null && st.uid !== uid) {
    const who = t.runAsUser ?? `the agent's user (uid ${uid})`;
    problems.push({ path: 'db.data_dir', message: `${t.dataDir} is owned by uid ${st.uid}, not by ${who}: PostgreSQL refuses to run on it (chown -R ${t.runAsUser ?? uid} ${t.dataDir})` });
  }
  const version = await readFile(join(t.dataDir, 'PG_VERSION'), 'utf8').catch(() => null);
  if (version === null) {
    // The agent would build a database here (initdb or a copy of the leader): it only does so in a directory it may empty.
    const foreign = await foreignEntries(t.dataDir).catch(() => []);
    if (foreign.length) {
      problems.push({ path: 'db.data_dir', message: `${t.dataDir} holds no PostgreSQL data but is not empty (${foreign.join(', ')}): Warden builds a database only in an empty directory and does not delete files it did not make` });
    }
    return;
  }
  if ((st.mode & 0o027) !== 0) {
    problems.push({ path: 'db.data_dir', message: `${t.dataDir} has mode ${(st.mode & 0o777).toString(8)}: PostgreSQL refuses a data directory open to others or writable by its group (chmod 700 ${t.dataDir})` });
  }
  const dataMajor = Number(version.trim());
  if (major !== null && dataMajor !== major) {
    problems.push({ path: 'db.data_dir', message: `${t.dataDir} holds PostgreSQL ${version.trim()} data but db.bin_dir has PostgreSQL ${major}: upgrade the data (pg_upgrade) or point db.bin_dir at version ${version.trim()}` });
  }
}

/** The log directory is one, or can be created. */
async function checkLogDir(t: PreflightTarget, problems: Problem[]): Promise<void> {
  const st = await stat(t.logDir).catch(() => null);
  if (st && !st.isDirectory()) problems.push({ path: 'db.log_dir', message: `${t.logDir} is not a directory` });
  if (!st) {
    const base = await nearestExisting(t.logDir);
    if (!(await accessible(base, constants.W_OK))) problems.push({ path: 'db.log_dir', message: `${t.logDir} does not exist and ${base} is not writable, so it cannot be created` });
  }
}

/**
 * Checks, before the agent starts anything, that this machine can run the configured
 * PostgreSQL: the programs in `bin_dir`, the server's OS user, the data directory (owner,
 * permissions, version) and the log directory. Returns every problem found (empty: fine).
 */
export async function checkPostgresSetup(t: PreflightTarget): Promise<Problem[]> {
  const problems: Problem[] = [];
  const major = await checkBinaries(t, problems);
  const uid = await serverUid(t, problems);
  await checkDataDir(t, uid, major, problems);
  await checkLogDir(t, problems);
  return problems;
}
