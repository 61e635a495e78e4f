import { join } from 'node:path';
import type { ParameterValue } from '../../domain/cluster/config/config.js';
import { buildConninfo, type Endpoint } from './conninfo.js';
import { directoryEntries, emptyDirectory, refuseDatabaseWithoutControlFile, refuseExistingDatabase, refuseForeignFiles } from './data-directory.js';
import type { ResolvedPgOptions } from './pg-options.js';
import { ensureOwnedDir } from './owned-files.js';
import { pathExists } from './path-exists.js';
import { CommandFailure, runCommand } from './run-command.js';

/** A replica creation method of the local configuration (`db.<name>`): a command such as a backup tool's restore. */
export interface ReplicaMethod {
  /** Run through /bin/sh as the server's OS user; the parameters follow it. */
  readonly command: string;
  /** Run it on the data directory as a failed earlier method left it (a delta restore), instead of an emptied one. */
  readonly keep_data?: boolean;
  /** Pass none of `--scope`, `--datadir`, `--role`, `--connstring`, nor the extra options. */
  readonly no_params?: boolean;
  /** It needs no running server to copy from (a restore from a backup repository). */
  readonly no_leader?: boolean;
  /** Any other key becomes `--<key>=<value>`. */
  readonly [option: string]: ParameterValue | undefined;
}

/** `db.basebackup`: pg_basebackup options, a map (`{max-rate: 100M}`) or a list of flags and one-key maps. */
export type BasebackupOptions = Readonly<Record<string, ParameterValue>> | readonly (string | Readonly<Record<string, ParameterValue>>)[];

/** The keys of a method that are Warden's own, not options of the command. */
const METHOD_KEYS = new Set(['command', 'keep_data', 'no_params', 'no_leader']);

/** pg_basebackup options Warden sets itself: the target, the source, the format and how WAL comes along. */
export const FORBIDDEN_BASEBACKUP_OPTIONS: readonly string[] = [
  'pgdata', 'D', 'format', 'F', 'wal-method', 'X', 'xlog-method', 'dbname', 'd', 'host', 'h', 'port', 'p',
  'username', 'U', 'password', 'W', 'no-password', 'w', 'gzip', 'z', 'compress', 'Z', 'version', 'V',
];

/** `--name` / `--name=value` of one option (a one-letter name becomes `-n` / `-nvalue`). */
function optionArg(name: string, value?: ParameterValue): string {
  const flag = name.length === 1 ? `-${name}` : `--${name}`;
  if (value === undefined || value === true) return flag;
  return name.length === 1 ? `${flag}${String(value)}` : `${flag}=${String(value)}`;
}

/** The extra pg_basebackup arguments of `options`; throws naming an option Warden sets itself. */
export function basebackupArgs(options: BasebackupOptions | undefined): string[] {
  const pairs: [string, ParameterValue | undefined][] = [];
  if (Array.isArray(options)) {
    for (const o of options as readonly (string | Readonly<Record<string, ParameterValue>>)[]) {
      if (typeof o === 'string') pairs.push([o, undefined]);
      else pairs.push(...Object.entries(o));
    }
  } else if (options) {
    pairs.push(...Object.entries(options as Readonly<Record<string, ParameterValue>>));
  }
  const out: string[] = [];
  for (const [name, value] of pairs) {
    if (FORBIDDEN_BASEBACKUP_OPTIONS.includes(name)) throw new Error(`db.basebackup: ${name} is set by Warden and cannot be given`);
    if (value === false) continue;
    out.push(optionArg(name, value));
  }
  return out;
}

/** The parameters a custom method's command gets (none with no_params). */
export function methodParams(opts: Pick<ResolvedPgOptions, 'scope' | 'dataDir'>, method: ReplicaMethod, connstring: string | null): string[] {
  if (method.no_params) return [];
  const params = [`--scope=${opts.scope}`, `--datadir=${opts.dataDir}`, '--role=replica'];
  if (connstring !== null) params.push(`--connstring=${connstring}`);
  for (const [k, v] of Object.entries(method)) if (!METHOD_KEYS.has(k) && v !== undefined) params.push(`--${k}=${String(v)}`);
  return params;
}

/** Runs an operator's command through the shell as the server's user, with `params` as its arguments ("$@"). */
export function runShellCommand(opts: ResolvedPgOptions, command: string, params: readonly string[], timeoutMs: number, env: Readonly<Record<string, string>> = {}) {
  return runCommand('/bin/sh', ['-c', `${command} "$@"`, 'warden', ...params], { runAs: opts.runAsUser, timeoutMs, env });
}

/** What one method of the chain did. */
export interface MethodAttempt {
  readonly method: string;
  readonly ok: boolean;
  /** Why it failed or was skipped. */
  readonly error?: string;
  /** Not run: not configured on this node, or it needs a source and there is none. */
  readonly skipped?: true;
  /** pg_basebackup could not connect to the source: nothing was copied. */
  readonly sourceUnreachable?: true;
}

/** Every method of the chain failed or was skipped (its attempts say how). */
export class ReplicaMethodsFailed extends Error {
  constructor(readonly attempts: readonly MethodAttempt[]) {
    const why = attempts.map((a) => `${a.method}: ${a.error}`).join('; ');
    super(attempts.length ? `every replica creation method failed (${why})` : 'no replica creation method to try');
    this.name = 'ReplicaMethodsFailed';
  }

  /**
   * The chain failed only because the source server did not take a connection: each method
   * that ran was pg_basebackup refused at connect. Trying again costs one connection attempt,
   * and succeeds once the source runs.
   */
  get sourceUnreachable(): boolean {
    return this.attempts.some((a) => a.sourceUnreachable) && this.attempts.every((a) => a.sourceUnreachable || a.skipped);
  }
}

/** pg_basebackup's or pg_rewind's failure to connect to their source (refused, no route, a server still starting). */
export function connectFailed(e: unknown): boolean {
  return e instanceof CommandFailure && /could not connect|connection to server .* failed/i.test(e.stderr);
}

/** The source's replication conninfo (password through PGPASSWORD, never on a command line). */
function replicationConninfo(opts: ResolvedPgOptions, source: Endpoint): string {
  return buildConninfo({ host: source.host, port: source.port, user: opts.replication.username, dbname: 'postgres', application_name: `${opts.name}_basebackup`, connect_timeout: 10 });
}

/**
 * Creates a replica's data directory with `methods` in order, falling back to the next when
 * one fails: `basebackup` (pg_basebackup from `source`, with db.basebackup's options) or a
 * method of the local configuration (its command, with `--scope`, `--datadir`,
 * `--role=replica`, `--connstring` and its extra options unless no_params). Without a source
 * only methods marked no_leader run. Unless `replacing` (the operator asked for this node's
 * data to be rebuilt), the directory must hold no database when it starts; each method but a
 * keep_data one starts from an empty directory (a keep_data one runs over what is there: a
 * delta restore of the database being replaced, or what an earlier method left), and one that
 * "succeeds" without leaving a database counts as failed. Returns every attempt; throws when
 * none succeeded (the directory is then emptied).
 */
export async function createReplicaWithMethods(
  opts: ResolvedPgOptions,
  source: Endpoint | null,
  methods: readonly string[],
  how: { readonly replacing?: boolean } = {},
): Promise<MethodAttempt[]> {
  if (!how.replacing) {
    await refuseExistingDatabase(opts.dataDir);
    // Before anything is emptied: what an interrupted build left is replaced, somebody's files are not.
    await refuseForeignFiles(opts.dataDir);
    // Nor a database that only lost its control file: a copy would empty it.
    await refuseDatabaseWithoutControlFile(opts.dataDir, opts.name);
  }
  await ensureOwnedDir(opts.dataDir, opts.runAsUser);
  const attempts: MethodAttempt[] = [];
  const env: Record<string, string> = opts.replication.password ? { PGPASSWORD: opts.replication.password } : {};
  for (const name of methods) {
    const custom = name === 'basebackup' ? null : opts.replicaMethods[name];
    if (name !== 'basebackup' && custom === undefined) {
      attempts.push({ method: name, ok: false, error: `not defined in this node's configuration (db.${name})`, skipped: true });
      continue;
    }
    if (source === null && (custom === null || custom?.no_leader !== true)) {
      attempts.push({ method: name, ok: false, error: 'needs a running server to copy from, and there is none', skipped: true });
      continue;
    }
    try {
      if (!custom?.keep_data && (await directoryEntries(opts.dataDir)).length) await emptyDirectory(opts.dataDir);
      if (custom === null) {
        const args = ['-D', opts.dataDir, '-d', replicationConninfo(opts, source!), '-X', 'stream', '-w', ...basebackupArgs(opts.basebackupOptions)];
        if (!args.some((a) => a === '-c' || a.startsWith('--checkpoint'))) args.push('-c', 'fast');
        await runCommand(join(opts.binDir, 'pg_basebackup'), args, { runAs: opts.runAsUser, timeoutMs: opts.createReplicaTimeoutMs, env });
      } else {
        const conn = source === null ? null : replicationConninfo(opts, source);
        await runShellCommand(opts, custom!.command, methodParams(opts, custom!, conn), opts.createReplicaTimeoutMs, env);
        if (!(await pathExists(join(opts.dataDir, 'global', 'pg_control')))) throw new Error('the command succeeded but left no database in the data directory');
      }
      attempts.push({ method: name, ok: true });
      return attempts;
    } catch (e) {
      const error = (e instanceof Error ? e.message : String(e)).split('\n').slice(0, 5).join(' ');
      attempts.push({ method: name, ok: false, error, ...(custom === null && connectFailed(e) ? { sourceUnreachable: true as const } : {}) });
    }
  }
  await emptyDirectory(opts.dataDir).catch(() => undefined);
  throw new ReplicaMethodsFailed(attempts);
}
