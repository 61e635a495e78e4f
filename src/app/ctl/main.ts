import { pathToFileURL } from 'node:url';
import { readBounded } from '../yaml-read.js';
import { Command, CommanderError, Option } from 'commander';
import { DcsUnavailableError, WardenError } from '../../domain/errors.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import type { CtlContext } from './context.js';
import { loadCtlConfig, requireScope, type CtlConfig, type CtlFlags } from './ctl-config.js';
import { CtlError, USAGE_ERROR_CODES, type CtlErrorCode } from './errors.js';
import { OUTPUT_FORMATS, ROLE_FILTERS } from './options.js';
import type { RestClient } from './rest-client.js';
import { CLEAR_SCREEN, editInEditor, Prompter, readInput, sleepUnlessAborted } from './terminal.js';
import { ctlVersion } from './ctl-version.js';

// Commands are loaded when they run (`await import`), not here: a call pays only for what it
// uses. `list` never loads pg, ajv or the gRPC stack; `query` loads pg, `edit-config` ajv.

/** Process-level effects main needs; replaceable in tests of the wiring. */
export interface CtlIo {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Builds the cluster store for a config and scope (etcd by default). */
  readonly makeStore: (config: CtlConfig, scope: string) => ClusterStore | Promise<ClusterStore>;
  /** Builds the REST client for a config. */
  readonly makeRest: (config: CtlConfig) => RestClient | Promise<RestClient>;
  readonly prompter: { ask(q: string): Promise<string>; askHidden?(q: string): Promise<string>; confirm(q: string): Promise<boolean>; close(): void };
  readonly signal: AbortSignal;
  /** Replaces the screen with a text; absent when stdout is not a terminal. */
  readonly redraw?: (s: string) => void;
}

/** How much a certificate, key or CA file may hold: a PEM file is a few KiB. */
const PEM_MAX_BYTES = 1024 * 1024;

function readPem(path: string | undefined, what: string): string | undefined {
  if (!path) return undefined;
  let read: { bytes: Buffer; whole: boolean };
  try {
    // Bounded: a file that never ends (/dev/zero) must not fill the memory.
    read = readBounded(path, PEM_MAX_BYTES);
  } catch (e) {
    throw new CtlError('config_unreadable', `cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!read.whole) throw new CtlError('config_unreadable', `cannot read ${what} ${path}: it holds more than 1 MiB, which is no PEM file`);
  return read.bytes.toString('utf8');
}

/**
 * Writes lines to `stream` until its reader goes away (`wardenctl ... | head -1`): from the
 * first EPIPE on, output is dropped instead of crashing the process with an unhandled
 * 'error' event, so that a command keeps doing what it was asked (restarting the next
 * member, say) and ends with its own exit code.
 */
export function lineWriter(stream: NodeJS.WritableStream): (s: string) => void {
  let closed = false;
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    closed = true;
  });
  return (s) => {
    if (!closed) stream.write(s.endsWith('\n') ? s : s + '\n');
  };
}

/** The real process: etcd, HTTP, the terminal. */
export function processIo(signal: AbortSignal): CtlIo {
  const warn = (s: string) => process.stderr.write(s + '\n');
  return {
    stdout: lineWriter(process.stdout),
    stderr: (s) => process.stderr.write(s.endsWith('\n') ? s : s + '\n'),
    env: process.env,
    makeStore: async (config, scope) => {
      for (const [path, what] of [[config.etcd.cacert, 'etcd CA file'], [config.etcd.cert, 'etcd certificate file'], [config.etcd.key, 'etcd key file']] as const) readPem(path, what);
      return (await import('./ctl-store.js')).ctlClusterStore(config, scope, warn);
    },
    makeRest: async (config) => {
      const ca = readPem(config.rest.cacert, 'CA file');
      const cert = readPem(config.rest.certfile, 'certificate file');
      const key = readPem(config.rest.keyfile, 'key file');
      const { HttpRestClient } = await import('./rest-client.js');
      return new HttpRestClient({
        ...(config.rest.auth ? { username: config.rest.auth.username, password: config.rest.auth.password } : {}),
        ...(ca ? { ca } : {}),
        ...(cert ? { cert } : {}),
        ...(key ? { key } : {}),
        insecure: config.rest.insecure,
      });
    },
    prompter: new Prompter(),
    signal,
    ...(process.stdout.isTTY ? { redraw: (s: string) => process.stdout.write(`${CLEAR_SCREEN}${s}\n`) } : {}),
  };
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** Global options: given before the command name (`wardenctl -c node.yml list`), as with patronictl. */
interface GlobalOptions {
  readonly config?: string;
  readonly dcsUrl?: string;
  readonly dcs?: string;
  readonly scope?: string;
  readonly namespace?: string;
  readonly insecure?: boolean;
}

/** Builds the commander program; each action runs with a context built from the global flags. */
export function buildProgram(io: CtlIo): Command {
  const program = new Command('wardenctl');
  program
    .description('Admin CLI of a Warden cluster: reads the cluster from etcd, acts through the agents\' REST API')
    .version(`wardenctl version ${ctlVersion()}`, '-V, --version', 'print wardenctl\'s version')
    .option('-c, --config <file>', 'wardenctl or agent node YAML (default: $WARDENCTL_CONFIG)')
    .addOption(new Option('--config-file <file>', 'same as --config').hideHelp())
    .option('-d, --dcs-url <hosts>', 'etcd to use: host:port[,host:port...], or etcd3://host:port (default 127.0.0.1:2379)')
    .addOption(new Option('--dcs <hosts>', 'same as --dcs-url').hideHelp())
    .option('--scope <name>', 'cluster name')
    .option('-n, --namespace <ns>', 'DCS namespace (default /service)')
    .option('-k, --insecure', 'do not verify the agents\' TLS certificates')
    .enablePositionalOptions()
    .showHelpAfterError('(run wardenctl --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s.replace(/\n$/, '')), writeErr: (s) => io.stderr(s.replace(/\n$/, '')) });

  const config = (scope?: string): CtlConfig => {
    const g = program.opts<GlobalOptions & { configFile?: string }>();
    const flags: CtlFlags = {
      ...(g.config ?? g.configFile ? { config: g.config ?? g.configFile } : {}),
      ...(g.dcsUrl ?? g.dcs ? { dcs: g.dcsUrl ?? g.dcs } : {}),
      ...(scope ?? g.scope ? { scope: scope ?? g.scope } : {}),
      ...(g.namespace ? { namespace: g.namespace } : {}),
      ...(g.insecure ? { insecure: true } : {}),
    };
    return loadCtlConfig(flags, io.env);
  };

  const prompter = io.prompter;
  /** Runs a command with a context for the configured (or given) scope; closes the DCS after. */
  const withCtx = async (fn: (ctx: CtlContext, cfg: CtlConfig) => Promise<void>, scope?: string): Promise<void> => {
    const cfg = config(scope);
    const s = requireScope(cfg);
    const [store, rest] = await Promise.all([io.makeStore(cfg, s), io.makeRest(cfg)]);
    const ctx: CtlContext = {
      scope: s,
      store,
      rest,
      out: io.stdout,
      warn: io.stderr,
      confirm: (q) => prompter.confirm(q),
      ask: (q) => prompter.ask(q),
      askHidden: (q) => (prompter.askHidden ? prompter.askHidden(q) : prompter.ask(q)),
      now: () => Date.now(),
      sleep: (ms) => sleepUnlessAborted(ms, io.signal),
      signal: io.signal,
      edit: async (text) => editInEditor(text, io.env),
      readFile: readInput,
      runSql: async (target, sql) => (await import('./pg-query.js')).runSqlWithPg(target, sql),
      ...(io.redraw ? { redraw: io.redraw } : {}),
    };
    try {
      await fn(ctx, cfg);
    } catch (e) {
      if (e instanceof DcsUnavailableError) throw new CtlError('dcs_unavailable', `cannot reach the DCS at ${cfg.etcd.hosts.join(',')}: ${e.message.replace(/\.? Resolution note:.*$/s, '')}`);
      throw e;
    } finally {
      await store.close();
    }
  };

  const formatOption = (d = 'pretty') => new Option('-f, --format <format>', 'output format').choices(OUTPUT_FORMATS as string[]).default(d);
  const roleOption = (d?: string) => {
    const o = new Option('-r, --role <role>', 'only members with this role').choices([...ROLE_FILTERS, 'master', 'standby', 'standby_leader']);
    return d ? o.default(d) : o;
  };
  const forceOption = () => new Option('--force', 'do not ask for confirmation; replace an action already scheduled');
  const leaderOption = () => new Option('--primary, --leader <name>', 'the current leader (checked)');

  for (const [name, tree] of [['list', false], ['topology', true]] as const) {
    program
      .command(`${name} [scope]`)
      .description(tree ? 'members as a replication tree' : 'members of the cluster, their role, state and lag')
      .addOption(formatOption())
      .option('-e, --extended', 'always show the pending restart, scheduled restart and tags columns')
      .option('-t, --timestamp', 'print the time of the reading above the table')
      .option('-w, --watch <seconds>', 'refresh every SECONDS until Ctrl-C')
      .option('-W', 'refresh every 2 seconds until Ctrl-C')
      .action(async (scope: string | undefined, o: { format: string; extended?: boolean; timestamp?: boolean; watch?: string; W?: boolean }) => {
        const { list } = await import('./list.js');
        const opts = { format: o.format, extended: !!o.extended, timestamp: !!o.timestamp, ...(o.W ? { watch: 2 } : o.watch !== undefined ? { watch: o.watch } : {}) };
        return withCtx((ctx) => list(ctx, opts, tree), scope);
      });
  }

  program
    .command('switchover')
    .description('planned change of leader, now or at a scheduled time')
    .addOption(leaderOption())
    .option('--candidate <name>', 'member to promote (default: the best eligible one)')
    .option('--scheduled <time>', 'ISO 8601 time (local when no zone), or "now"')
    .option('--dry-run', 'check everything and say which member would be promoted and why, changing nothing')
    .addOption(forceOption())
    .action(async (o: { leader?: string; candidate?: string; scheduled?: string; force?: boolean; dryRun?: boolean }) => {
      const { switchover } = await import('./switchover.js');
      return withCtx((ctx) => switchover(ctx, o));
    });

  program
    .command('failover')
    .description('promote a member, also when there is no leader (may lose data: prefer switchover)')
    .option('--candidate <name>', 'member to promote')
    .addOption(new Option('--primary, --leader <name>', 'the current leader: the request becomes a switchover'))
    .option('--dry-run', 'check everything and say whether the candidate would be promoted and why, changing nothing')
    .addOption(forceOption())
    .action(async (o: { candidate?: string; leader?: string; force?: boolean; dryRun?: boolean }) => {
      const { failover } = await import('./failover.js');
      return withCtx((ctx) => failover(ctx, o));
    });

  program
    .command('events')
    .description("every member's events (role changes, switchovers, refusals, with reasons) merged by time")
    .option('-f, --follow', 'keep printing new events as they happen, until Ctrl-C')
    .addOption(new Option('--format <format>', 'pretty (one line each) or json (one object per line)').choices(['pretty', 'json']).default('pretty'))
    .action(async (o: { follow?: boolean; format: string }) => {
      const { events } = await import('./events.js');
      return withCtx((ctx) => events(ctx, { follow: !!o.follow, format: o.format }));
    });

  program
    .command('restart [members...]')
    .description('restart the database on members (all by default), now or scheduled')
    .addOption(roleOption())
    .option('--any', 'restart one member only, picked at random among those selected')
    .option('--pending', 'only members with a pending restart')
    .option('--scheduled <time>', 'ISO 8601 time (local when no zone), or "now"')
    .option('--pg-version, --db-version <version>', 'only if the server version is lower than X.Y[.Z]')
    .option('--timeout <duration>', 'wait this long for the database to accept connections (30, 30s, 5min)')
    .addOption(forceOption())
    .action(async (members: string[], o: { role?: string; any?: boolean; pending?: boolean; scheduled?: string; dbVersion?: string; timeout?: string; force?: boolean }) => {
      const { restart } = await import('./restart.js');
      return withCtx((ctx) => restart(ctx, members, o));
    });

  program
    .command('reload [members...]')
    .description('members re-read their local configuration file')
    .addOption(roleOption())
    .addOption(forceOption())
    .action(async (members: string[], o: { role?: string; force?: boolean }) => {
      const { reload } = await import('./reload.js');
      return withCtx((ctx) => reload(ctx, members, o));
    });

  program
    .command('reinit <members...>')
    .description('rebuild replicas from a fresh base backup')
    .option('--from-leader', 'take the backup from the leader')
    .option('--wait', 'wait until each member runs again')
    .addOption(forceOption())
    .action(async (members: string[], o: { fromLeader?: boolean; wait?: boolean; force?: boolean }) => {
      const { reinit } = await import('./reinit.js');
      return withCtx((ctx) => reinit(ctx, members, o));
    });

  program
    .command('flush <target> [members...]')
    .description('cancel scheduled actions: "restart" (on members) or "switchover"')
    .addOption(roleOption())
    .addOption(forceOption())
    .action(async (target: string, members: string[], o: { role?: string; force?: boolean }) => {
      const { flush } = await import('./flush.js');
      return withCtx((ctx) => flush(ctx, target, members, o));
    });

  for (const [name, paused] of [['pause', true], ['resume', false]] as const) {
    program
      .command(name)
      .description(paused ? 'maintenance mode: the agents stop automatic failover and restarts' : 'leave maintenance mode')
      .option('--wait', 'wait until every member reports the new state')
      .action(async (o: { wait?: boolean }) => {
        const { setPause } = await import('./pause.js');
        return withCtx((ctx) => setPause(ctx, paused, o));
      });
  }

  program
    .command('edit-config')
    .description('change the dynamic configuration (-s/-p/--apply/--replace, or in $EDITOR), with a diff and a compare-and-set write')
    .option('-s, --set <key.path=value>', 'set a key (value parsed as YAML; empty or null removes it); repeatable', collect, [])
    .option('-p, --pg <name=value>', 'set a server parameter (db.parameters); repeatable', collect, [])
    .addOption(new Option('--param <name=value>', 'same as --pg').argParser(collect).default([]).hideHelp())
    .option('--apply <file>', 'merge a YAML/JSON fragment from FILE (- for stdin)')
    .option('--replace <file>', 'replace the whole configuration with FILE (- for stdin)')
    .option('-q, --quiet', 'do not print the diff')
    .addOption(forceOption())
    .action(async (o: { set: string[]; pg: string[]; param: string[]; apply?: string; replace?: string; quiet?: boolean; force?: boolean }) => {
      const { editConfig } = await import('./edit-config.js');
      const { pg, param, ...rest } = o;
      return withCtx((ctx) => editConfig(ctx, { ...rest, param: [...pg, ...param] }));
    });

  program
    .command('promote-cluster')
    .description('a standby cluster becomes a primary cluster: removes standby_cluster, its standby leader promotes')
    .addOption(new Option('--force', 'do not ask for confirmation'))
    .option('--no-wait', 'return once the change is written, without waiting for the new primary')
    .action(async (o: { force?: boolean; wait: boolean }) => {
      const { promoteClusterCommand } = await import('./cluster-role.js');
      return withCtx((ctx) => promoteClusterCommand(ctx, { ...(o.force ? { force: true } : {}), ...(o.wait ? {} : { noWait: true }) }));
    });

  program
    .command('demote-cluster')
    .description('a primary cluster becomes a standby cluster of another: sets standby_cluster, its primary becomes the standby leader')
    .option('--host <host>', 'the remote primary (or a proxy routing to it)')
    .option('--port <port>', 'its port (default 5432)')
    .option('--primary-slot-name <name>', 'a replication slot on the remote primary to stream through')
    .option('--restore-command <command>', 'fetch WAL from an archive (with or instead of --host)')
    .option('--archive-cleanup-command <command>', 'clean the archive after restartpoints')
    .option('--recovery-min-apply-delay <delay>', 'keep the standby leader this far behind (ms, or 5min, 1h...)')
    .option('--create-replica-methods <list>', 'comma-separated methods to rebuild the standby leader from the remote (default basebackup)')
    .addOption(new Option('--force', 'do not ask for confirmation'))
    .option('--no-wait', 'return once the change is written, without waiting for the standby leader')
    .action(
      async (o: {
        host?: string;
        port?: string;
        primarySlotName?: string;
        restoreCommand?: string;
        archiveCleanupCommand?: string;
        recoveryMinApplyDelay?: string;
        createReplicaMethods?: string;
        force?: boolean;
        wait: boolean;
      }) => {
        const { demoteClusterCommand } = await import('./cluster-role.js');
        const { wait, ...rest } = o;
        return withCtx((ctx) => demoteClusterCommand(ctx, { ...rest, ...(wait ? {} : { noWait: true }) }));
      },
    );

  program
    .command('show-config')
    .description('the dynamic configuration stored in the DCS')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .action(async (o: { format: string }) => {
      const { showConfig } = await import('./show-config.js');
      return withCtx((ctx) => showConfig(ctx, o));
    });

  program
    .command('history')
    .description('past switchovers and failovers')
    .addOption(formatOption())
    .action(async (o: { format: string }) => {
      const { history } = await import('./history.js');
      return withCtx((ctx) => history(ctx, o));
    });

  program
    .command('dsn [member]')
    .description('connection string of a member\'s database (default: the leader)')
    .addOption(roleOption())
    .option('-m, --member <name>', 'the member (same as the argument)')
    .action(async (member: string | undefined, o: { role?: string; member?: string }) => {
      const { dsn } = await import('./dsn.js');
      if (member && o.member && member !== o.member) throw new CtlError('invalid_choice', `two different members given: ${member} and ${o.member}`);
      return withCtx((ctx) => dsn(ctx, member ?? o.member, o));
    });

  program
    .command('query')
    .description('run SQL on a member (default: the leader) and print the result')
    .option('-m, --member <name>', 'member to connect to')
    .addOption(roleOption())
    .option('-c, --command <sql>', 'SQL to run')
    .option('--file <file>', 'read the SQL from FILE (- for stdin)')
    .option('-U, --username <user>', 'database user (default: the config\'s superuser, else $PGUSER)')
    .option('--password', 'ask for the password (not echoed)')
    .option('-d, --dbname <name>', 'database name')
    .addOption(formatOption())
    .option('--delimiter <text>', 'column separator of the tsv format', '\t')
    .action(async (o: { member?: string; role?: string; command?: string; file?: string; username?: string; password?: boolean; dbname?: string; format: string; delimiter: string }) => {
      const { query } = await import('./query.js');
      return withCtx(async (ctx, cfg) => {
        const user = o.username ?? cfg.db.username;
        let password = o.username ? io.env['PGPASSWORD'] : (cfg.db.password ?? io.env['PGPASSWORD']);
        if (o.password) password = await ctx.askHidden(`Password for ${user ?? 'the database user'}: `);
        const dbname = o.dbname ?? cfg.db.dbname;
        return query(ctx, {
          ...(o.member ? { member: o.member } : {}),
          ...(o.role ? { role: o.role } : {}),
          ...(o.command !== undefined ? { command: o.command } : {}),
          ...(o.file !== undefined ? { file: o.file } : {}),
          format: o.format,
          delimiter: o.delimiter,
          ...(user ? { user } : {}),
          ...(password ? { password } : {}),
          ...(dbname ? { dbname } : {}),
        });
      });
    });

  program
    .command('remove <scope>')
    .description('delete every DCS key of a cluster (asks you to type its name; stop its agents first)')
    .action(async (scope: string) => {
      const { remove } = await import('./remove.js');
      return withCtx((ctx) => remove(ctx, scope), scope);
    });

  program
    .command('version [members...]')
    .description('wardenctl\'s version, and each member\'s agent and server version')
    .action(async (members: string[]) => {
      const { version } = await import('./version.js');
      const cfg = config();
      if (!cfg.scope) {
        if (members.length) requireScope(cfg);
        return version(io.stdout, null);
      }
      return withCtx((ctx) => version(io.stdout, ctx, members));
    });

  return program;
}

/** One line for an error: typed errors by message, DCS errors with where it looked. */
function errorLine(e: unknown): string {
  if (e instanceof WardenError) return e.message;
  return e instanceof Error ? e.message : String(e);
}

/** Runs wardenctl with `argv` (as process.argv); resolves to the exit code, never throws. */
export async function runCli(argv: readonly string[], io?: CtlIo): Promise<number> {
  const controller = new AbortController();
  const theIo = io ?? processIo(controller.signal);
  const program = buildProgram(theIo);
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and --version exit 0; usage errors were already printed by commander.
      return e.exitCode === 0 ? 0 : 2;
    }
    theIo.stderr(`wardenctl: ${errorLine(e)}`);
    if (theIo.env['WARDENCTL_DEBUG'] && e instanceof Error && e.stack) theIo.stderr(e.stack);
    // By code: commands are loaded on demand and their error class need not be this module's copy.
    const code = (e as { code?: unknown } | null)?.code;
    return typeof code === 'string' && USAGE_ERROR_CODES.has(code as CtlErrorCode) ? 2 : 1;
  } finally {
    theIo.prompter.close();
  }
}

/** Process entry: Ctrl-C stops watch/wait loops cleanly; a second Ctrl-C exits at once. */
export async function main(): Promise<void> {
  const controller = new AbortController();
  process.on('SIGINT', () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
    setTimeout(() => process.exit(130), 2000).unref();
  });
  process.exitCode = await runCli(process.argv, processIo(controller.signal));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  void main();
}
