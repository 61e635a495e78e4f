import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option } from 'commander';
import { clusterPrefix } from '../../adapters/cluster-store/keys.js';
import { DcsUnavailableError, WardenError } from '../../domain/errors.js';
import { Etcd3ClusterStore } from '../../adapters/cluster-store/etcd3-cluster-store.js';
import { SystemClock } from '../../adapters/clock/system-clock.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import { WarningLogger } from './warning-logger.js';
import { ROLE_FILTERS } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { loadCtlConfig, requireScope, type CtlConfig, type CtlFlags } from './ctl-config.js';
import { editConfig } from './edit-config.js';
import { CtlError } from './errors.js';
import { failover } from './failover.js';
import { flush } from './flush.js';
import { history } from './history.js';
import { dsn } from './dsn.js';
import { list } from './list.js';
import { setPause } from './pause.js';
import { runSqlWithPg } from './pg-query.js';
import { query } from './query.js';
import { reinit } from './reinit.js';
import { reload } from './reload.js';
import { remove } from './remove.js';
import { restart } from './restart.js';
import { HttpRestClient, type RestClient } from './rest-client.js';
import { showConfig } from './show-config.js';
import { switchover } from './switchover.js';
import { editInEditor, Prompter, readInput, sleepUnlessAborted } from './terminal.js';
import { topology } from './topology.js';
import { ctlVersion, version } from './version.js';
import { OUTPUT_FORMATS } from './table-format.js';

/** How long one DCS call may take before wardenctl gives up on it. */
const DCS_TIMEOUT_MS = 10_000;

/** Process-level effects main needs; replaceable in tests of the wiring. */
export interface CtlIo {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
  readonly env: NodeJS.ProcessEnv;
  /** Builds the cluster store for a config and scope (etcd by default). */
  readonly makeStore: (config: CtlConfig, scope: string) => ClusterStore;
  /** Builds the REST client for a config. */
  readonly makeRest: (config: CtlConfig) => RestClient;
  readonly prompter: { ask(q: string): Promise<string>; confirm(q: string): Promise<boolean>; close(): void };
  readonly signal: AbortSignal;
}

function readPem(path: string | undefined, what: string): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new CtlError('config_unreadable', `cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** The real process: etcd, HTTP, the terminal. */
export function processIo(signal: AbortSignal): CtlIo {
  return {
    stdout: (s) => process.stdout.write(s.endsWith('\n') ? s : s + '\n'),
    stderr: (s) => process.stderr.write(s.endsWith('\n') ? s : s + '\n'),
    env: process.env,
    makeStore: (config, scope) =>
      new Etcd3ClusterStore({
        clock: new SystemClock(),
        logger: new WarningLogger((s) => process.stderr.write(s + '\n')),
        hosts: config.etcd.hosts,
        prefix: clusterPrefix(config.namespace, scope),
        retryTimeoutMs: DCS_TIMEOUT_MS,
        protocol: config.etcd.protocol,
        ...(config.etcd.username !== undefined ? { username: config.etcd.username, password: config.etcd.password ?? '' } : {}),
        ...(config.etcd.cacert ? { cacert: config.etcd.cacert } : {}),
        ...(config.etcd.cert ? { cert: config.etcd.cert } : {}),
        ...(config.etcd.key ? { key: config.etcd.key } : {}),
      }),
    makeRest: (config) => {
      const ca = readPem(config.rest.cacert, 'CA file');
      const cert = readPem(config.rest.certfile, 'certificate file');
      const key = readPem(config.rest.keyfile, 'key file');
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
  };
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** Builds the commander program; each action runs with a context built from the global flags. */
export function buildProgram(io: CtlIo): Command {
  const program = new Command('wardenctl');
  program
    .description('Admin CLI of a Warden cluster: reads the cluster from etcd, acts through the agents\' REST API')
    .version(ctlVersion(), '-V, --version-only', 'print wardenctl\'s version only')
    .option('-c, --config <file>', 'wardenctl or agent node YAML (default: $WARDENCTL_CONFIG)')
    .option('--dcs <hosts>', 'etcd host:port list, comma-separated (default 127.0.0.1:2379)')
    .option('--scope <name>', 'cluster name')
    .option('-n, --namespace <ns>', 'DCS namespace (default /service)')
    .showHelpAfterError('(run wardenctl --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout(s.replace(/\n$/, '')), writeErr: (s) => io.stderr(s.replace(/\n$/, '')) });

  const config = (scope?: string): CtlConfig => {
    const g = program.opts<CtlFlags>();
    const env = io.env;
    return loadCtlConfig({ ...g, ...(scope ? { scope } : {}) }, env);
  };

  /** Runs a command with a context for the configured (or given) scope; closes the DCS after. */
  const withCtx = async (fn: (ctx: CtlContext, cfg: CtlConfig) => Promise<void>, scope?: string): Promise<void> => {
    const cfg = config(scope);
    const s = requireScope(cfg);
    const store = io.makeStore(cfg, s);
    const ctx: CtlContext = {
      scope: s,
      store,
      rest: io.makeRest(cfg),
      out: io.stdout,
      warn: io.stderr,
      confirm: (q) => io.prompter.confirm(q),
      ask: (q) => io.prompter.ask(q),
      now: () => Date.now(),
      sleep: (ms) => sleepUnlessAborted(ms, io.signal),
      signal: io.signal,
      edit: async (text) => editInEditor(text, io.env),
      readFile: readInput,
      runSql: runSqlWithPg,
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

  const formatOption = () => new Option('-f, --format <format>', 'output format').choices(OUTPUT_FORMATS as string[]).default('pretty');
  const roleOption = (d?: string) => {
    const o = new Option('-r, --role <role>', 'only members with this role').choices(ROLE_FILTERS as string[]);
    return d ? o.default(d) : o;
  };
  const forceOption = () => new Option('--force', 'do not ask for confirmation');

  for (const [name, tree] of [['list', false], ['topology', true]] as const) {
    program
      .command(`${name} [scope]`)
      .description(tree ? 'members as a replication tree' : 'members of the cluster, their role, state and lag')
      .addOption(formatOption())
      .option('-e, --extended', 'always show the pending restart, scheduled restart and tags columns')
      .option('-w, --watch <seconds>', 'refresh every SECONDS until Ctrl-C')
      .option('-W', 'refresh every 2 seconds until Ctrl-C')
      .action((scope: string | undefined, o: { format: string; extended?: boolean; watch?: string; W?: boolean }) =>
        withCtx((ctx) => (tree ? topology : list)(ctx, { format: o.format, extended: !!o.extended, ...(o.W ? { watch: 2 } : o.watch !== undefined ? { watch: o.watch } : {}) }), scope),
      );
  }

  program
    .command('switchover')
    .description('planned change of leader, now or at a scheduled time')
    .option('--leader <name>', 'the current leader (checked)')
    .option('--candidate <name>', 'member to promote (default: the best eligible one)')
    .option('--scheduled <time>', 'ISO 8601 time (local when no zone), or "now"')
    .addOption(forceOption())
    .action((o: { leader?: string; candidate?: string; scheduled?: string; force?: boolean }) => withCtx((ctx) => switchover(ctx, o)));

  program
    .command('failover')
    .description('promote a member, also when there is no leader (may lose data: prefer switchover)')
    .option('--candidate <name>', 'member to promote')
    .addOption(forceOption())
    .action((o: { candidate?: string; force?: boolean }) => withCtx((ctx) => failover(ctx, o)));

  program
    .command('restart [members...]')
    .description('restart the database on members (all by default), now or scheduled')
    .addOption(roleOption())
    .option('--pending', 'only members with a pending restart')
    .option('--scheduled <time>', 'ISO 8601 time (local when no zone), or "now"')
    .option('--db-version <version>', 'only if the server version is lower than X.Y[.Z]')
    .option('--timeout <duration>', 'wait this long for the database to accept connections (30, 30s, 5min)')
    .addOption(forceOption())
    .action((members: string[], o: { role?: string; pending?: boolean; scheduled?: string; dbVersion?: string; timeout?: string; force?: boolean }) =>
      withCtx((ctx) => restart(ctx, members, o)),
    );

  program
    .command('reload [members...]')
    .description('members re-read their local configuration file')
    .addOption(roleOption())
    .addOption(forceOption())
    .action((members: string[], o: { role?: string; force?: boolean }) => withCtx((ctx) => reload(ctx, members, o)));

  program
    .command('reinit <members...>')
    .description('rebuild replicas from a fresh base backup')
    .option('--from-leader', 'take the backup from the leader')
    .option('--wait', 'wait until each member runs again')
    .addOption(forceOption())
    .action((members: string[], o: { fromLeader?: boolean; wait?: boolean; force?: boolean }) => withCtx((ctx) => reinit(ctx, members, o)));

  program
    .command('flush <target> [members...]')
    .description('cancel scheduled actions: "restart" (on members) or "switchover"')
    .addOption(roleOption())
    .addOption(forceOption())
    .action((target: string, members: string[], o: { role?: string; force?: boolean }) => withCtx((ctx) => flush(ctx, target, members, o)));

  for (const [name, paused] of [['pause', true], ['resume', false]] as const) {
    program
      .command(name)
      .description(paused ? 'maintenance mode: the agents stop automatic failover and restarts' : 'leave maintenance mode')
      .option('--wait', 'wait until every member reports the new state')
      .action((o: { wait?: boolean }) => withCtx((ctx) => setPause(ctx, paused, o)));
  }

  program
    .command('edit-config')
    .description('change the dynamic configuration (-s/-p/--apply, or in $EDITOR), with a diff and a compare-and-set write')
    .option('-s, --set <key.path=value>', 'set a key (value parsed as YAML; empty or null removes it); repeatable', collect, [])
    .option('-p, --param <name=value>', 'set a server parameter (db.parameters); repeatable', collect, [])
    .option('--apply <file>', 'merge a YAML/JSON fragment from FILE (- for stdin)')
    .option('-q, --quiet', 'do not print the diff')
    .addOption(forceOption())
    .action((o: { set: string[]; param: string[]; apply?: string; quiet?: boolean; force?: boolean }) => withCtx((ctx) => editConfig(ctx, o)));

  program
    .command('show-config')
    .description('the dynamic configuration stored in the DCS')
    .addOption(new Option('-f, --format <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .action((o: { format: string }) => withCtx((ctx) => showConfig(ctx, o)));

  program
    .command('history')
    .description('past switchovers and failovers')
    .addOption(formatOption())
    .action((o: { format: string }) => withCtx((ctx) => history(ctx, o)));

  program
    .command('dsn [member]')
    .description('connection string of a member\'s database (default: the leader)')
    .addOption(roleOption())
    .action((member: string | undefined, o: { role?: string }) => withCtx((ctx) => dsn(ctx, member, o)));

  program
    .command('query')
    .description('run SQL on a member (default: the leader) and print the result')
    .option('-m, --member <name>', 'member to connect to')
    .addOption(roleOption())
    .option('-c, --command <sql>', 'SQL to run')
    .option('--file <file>', 'read the SQL from FILE (- for stdin)')
    .option('-U, --username <user>', 'database user (default: the config\'s superuser, else $PGUSER)')
    .option('-d, --dbname <name>', 'database name')
    .addOption(formatOption())
    .action((o: { member?: string; role?: string; command?: string; file?: string; username?: string; dbname?: string; format: string }) =>
      withCtx((ctx, cfg) => {
        const user = o.username ?? cfg.db.username;
        const password = o.username ? io.env['PGPASSWORD'] : (cfg.db.password ?? io.env['PGPASSWORD']);
        const dbname = o.dbname ?? cfg.db.dbname;
        return query(ctx, {
          ...(o.member ? { member: o.member } : {}),
          ...(o.role ? { role: o.role } : {}),
          ...(o.command !== undefined ? { command: o.command } : {}),
          ...(o.file !== undefined ? { file: o.file } : {}),
          format: o.format,
          ...(user ? { user } : {}),
          ...(password ? { password } : {}),
          ...(dbname ? { dbname } : {}),
        });
      }),
    );

  program
    .command('remove <scope>')
    .description('delete every DCS key of a cluster (asks you to type its name; stop its agents first)')
    .action((scope: string) => withCtx((ctx) => remove(ctx, scope), scope));

  program
    .command('version [members...]')
    .description('wardenctl\'s version, and each member\'s agent and server version')
    .action(async (members: string[]) => {
      const cfg = config();
      if (!cfg.scope) return version(io.stdout, null);
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
      // Help and --version-only exit 0; usage errors were already printed by commander.
      return e.exitCode === 0 ? 0 : 2;
    }
    theIo.stderr(`wardenctl: ${errorLine(e)}`);
    if (theIo.env['WARDENCTL_DEBUG'] && e instanceof Error && e.stack) theIo.stderr(e.stack);
    return 1;
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
