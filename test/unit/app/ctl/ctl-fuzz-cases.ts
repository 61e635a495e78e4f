import { mutateText, type Random } from '../../../support/config-fuzz.js';

/**
 * Generated wardenctl command lines for the fuzz tests (in process, and through the real
 * binary): every command with good option values, then one or two changes: an unknown or
 * misspelt command or option, a value missing, a choice not offered, a bad --scheduled time,
 * --watch, --db-version or --timeout, a required option left out, options that do not go
 * together, arguments that are unicode, empty, very long or repeated, a config file that is
 * not one. The cluster is always given at a closed port: nothing is reachable, so each
 * command that gets past its checks fails at the DCS.
 *
 * What a case expects is decided by what wardenctl checks first: commander's own errors (2),
 * then a file that is not a config (1), then a missing cluster name (1), then wardenctl's own
 * checks of the values (2), then the DCS (1).
 */

/** Where in the order of checks a case fails. */
export interface CtlCase {
  /** The arguments after `wardenctl`; `@CONFIG@` stands for the config file's path. */
  readonly argv: readonly string[];
  /** The config file's bytes, when the case has one. */
  readonly config?: Buffer;
  readonly notes: readonly string[];
  /** commander refuses the command line (exit 2 before anything else). */
  readonly commanderError: boolean;
  /** Help or the version is asked for (exit 0, nothing else happens). */
  readonly help: boolean;
  /** Refused by wardenctl before the config is read (exit 2). */
  readonly earlyUsage: boolean;
  /** Refused by wardenctl's own checks of the values, once the config is read (exit 2). */
  readonly usage: boolean;
  /** The cluster name given by --scope or an argument of the command. */
  readonly scopeGiven: boolean;
  /** `version` without members: it needs no cluster name (and no DCS without one). */
  readonly versionOnly: boolean;
  /** The global flags given, as wardenctl reads its config with them (a flag wins over the file, which is then not read there). */
  readonly flags: { readonly dcs?: string; readonly scope?: string; readonly namespace?: string };
}

export const CONFIG = '@CONFIG@';

type Values = { readonly good: readonly string[]; readonly bad?: readonly string[] };

const NAMES: Values = { good: ['node1', 'node2', 'n-3', 'ünï', '名前', 'x'.repeat(300), '.', '-', 'a b'] };
const FUTURE = ['2099-01-31T02:00+01:00', '2099-12-31 23:59:59Z', 'now', 'NOW', '2099-06-01T00:00:00.123456789+0530'];
const SCHEDULE: Values = { good: FUTURE, bad: ['', ' ', 'tomorrow', '1/2/2030', '2030-02-30T01:00', '2000-01-01T00:00Z', '2099-13-01T00:00', '2099-01-01', 'ünï', 'x'.repeat(5000), '2099-01-01T24:00', '2099-01-01T00:00+99:99x'] };
const WATCH: Values = { good: ['1', '0.5', '2'], bad: ['0', '-1', 'x', '', 'NaN', 'Infinity'] };
const DB_VERSION: Values = { good: ['15.4', '16', '9.6.24'].slice(0, 1).concat(['16.1']), bad: ['16', 'x', '', '1.2.3.4', 'v16'] };
const TIMEOUT: Values = { good: ['30', '30s', '5min', '1h', '2m'], bad: ['0', '-1', 'x', '', '1d', '30 s s'] };
const ASSIGN: Values = { good: ['ttl=30', 'loop_wait=10', 'db.parameters.work_mem=4MB', 'synchronous_mode=quorum', 'x.y.z=', 'a=b=c', 'k=&a [*a]'], bad: ['foo', '=1', '', '.a=1', 'a..b=1'] };

interface Spec {
  /** Positional arguments: how many (min, max) and their values. */
  readonly args?: { readonly min: number; readonly max: number; readonly values: readonly string[] };
  /** Options and their values (null: a switch). */
  readonly opts: Readonly<Record<string, Values | readonly string[] | null>>;
  /** Options it needs (with a good value). */
  readonly required?: readonly string[];
  /** The command's positional argument is the cluster name. */
  readonly scopeArg?: boolean;
}

const FORMATS = ['pretty', 'json', 'yaml', 'tsv'];
const ROLES = ['leader', 'primary', 'standby-leader', 'replica', 'any', 'master', 'standby', 'standby_leader'];

const COMMANDS: Readonly<Record<string, Spec>> = {
  list: { args: { min: 0, max: 1, values: ['demo', 'other'] }, opts: { '-f': FORMATS, '-e': null, '-t': null, '-w': WATCH, '-W': null }, scopeArg: true },
  topology: { args: { min: 0, max: 1, values: ['demo'] }, opts: { '-f': FORMATS, '-e': null }, scopeArg: true },
  switchover: { opts: { '--leader': NAMES, '--primary': NAMES, '--candidate': NAMES, '--scheduled': SCHEDULE, '--dry-run': null, '--force': null } },
  failover: { opts: { '--candidate': NAMES, '--leader': NAMES, '--dry-run': null, '--force': null }, required: ['--candidate'] },
  events: { opts: { '-f': null, '--format': ['pretty', 'json'] } },
  restart: { args: { min: 0, max: 3, values: NAMES.good }, opts: { '-r': ROLES, '--any': null, '--pending': null, '--scheduled': SCHEDULE, '--db-version': DB_VERSION, '--pg-version': DB_VERSION, '--timeout': TIMEOUT, '--force': null } },
  reload: { args: { min: 0, max: 2, values: NAMES.good }, opts: { '-r': ROLES, '--force': null } },
  reinit: { args: { min: 1, max: 2, values: NAMES.good }, opts: { '--from-leader': null, '--wait': null, '--force': null } },
  flush: { args: { min: 1, max: 1, values: ['restart', 'switchover'] }, opts: { '-r': ROLES, '--force': null } },
  pause: { opts: { '--wait': null } },
  resume: { opts: { '--wait': null } },
  'edit-config': { opts: { '-s': ASSIGN, '-p': { good: ['work_mem=4MB', 'a.b=1'], bad: ['x', '=1'] }, '-q': null, '--force': null } },
  'promote-cluster': { opts: { '--force': null, '--no-wait': null } },
  'demote-cluster': { opts: { '--host': NAMES, '--port': ['5432', 'x', '-1', '99999'], '--primary-slot-name': NAMES, '--restore-command': ['cp /a/%f %p'], '--recovery-min-apply-delay': ['5min', 'x'], '--create-replica-methods': ['basebackup', 'a,,b'], '--force': null, '--no-wait': null }, required: ['--host'] },
  'show-config': { opts: { '-f': ['yaml', 'json'] } },
  history: { opts: { '-f': FORMATS } },
  dsn: { args: { min: 0, max: 1, values: NAMES.good }, opts: { '-r': ROLES } },
  query: { opts: { '-m': NAMES, '-U': NAMES, '-d': NAMES, '-f': FORMATS, '--delimiter': [';', '', '\t', 'ünï'], '-c': ['SELECT 1', 'x'.repeat(10_000), 'SELECT \u00e9'] }, required: ['-c'] },
  remove: { args: { min: 1, max: 1, values: ['demo', 'other'] }, opts: {}, scopeArg: true },
  version: { args: { min: 0, max: 2, values: NAMES.good }, opts: {} },
};

const valuesOf = (v: Values | readonly string[]): Values => (Array.isArray(v) ? { good: v as readonly string[] } : (v as Values));

/** A config file: a good one at the closed port, with or without a scope, or one changed at the YAML level. */
function configFile(rng: Random, port: number): { bytes: Buffer; note: string } {
  const scope = rng.chance(0.8) ? 'scope: demo\n' : '';
  const text = `${scope}namespace: /service\netcd3:\n  hosts: [127.0.0.1:${port}]\nrestapi:\n  authentication: {username: admin, password: secret}\nctl:\n  insecure: ${rng.pick(['false', 'true'])}\n`;
  switch (rng.weighted({ good: 6, yaml: 3, types: 2 })) {
    case 'good':
      return { bytes: Buffer.from(text), note: `config file${scope ? '' : ' without scope'}` };
    case 'types': {
      const bad = rng.pick([`etcd3: {hosts: 5}`, `etcd3: {hosts: [127.0.0.1:${port}], protocol: gopher}`, `ctl: {insecure: maybe}`, `scope: [a, b]`, `restapi: {authentication: {username: [x]}}`, `namespace: {a: 1}`]);
      return { bytes: Buffer.from(`${text.replace(/^(etcd3|ctl|scope|restapi|namespace):.*(\n  .*)*\n/m, '')}${bad}\n`), note: `config file with ${bad}` };
    }
    default: {
      const r = mutateText(rng, text, ['scope', 'etcd3'], 'colour');
      return { bytes: r.bytes, note: `config file: ${r.note}` };
    }
  }
}

/** One generated command line (the cluster at `port`, where nothing listens). */
export function ctlCase(rng: Random, port: number): CtlCase {
  const notes: string[] = [];
  const globals: string[] = [];
  let config: Buffer | undefined;
  let scopeGiven = false;
  const flags: { dcs?: string; scope?: string; namespace?: string } = {};
  switch (rng.weighted({ flags: 5, file: 4, noScope: 1 })) {
    case 'flags':
      flags.dcs = rng.pick([`127.0.0.1:${port}`, `etcd3://127.0.0.1:${port}`, `127.0.0.1:${port},127.0.0.1:${port}`]);
      globals.push(rng.pick(['-d', '--dcs-url', '--dcs']), flags.dcs, '--scope', 'demo');
      flags.scope = 'demo';
      if (rng.chance(0.3)) {
        flags.namespace = rng.pick(['/service', '/x', 'ünï']);
        globals.push('-n', flags.namespace);
      }
      if (rng.chance(0.2)) globals.push('-k');
      scopeGiven = true;
      notes.push('cluster by flags');
      break;
    case 'file': {
      const f = configFile(rng, port);
      config = f.bytes;
      globals.push(rng.pick(['-c', '--config', '--config-file']), CONFIG);
      if (rng.chance(0.2)) {
        globals.push('--scope', 'demo');
        flags.scope = 'demo';
        scopeGiven = true;
      }
      notes.push(f.note);
      break;
    }
    default:
      flags.dcs = `127.0.0.1:${port}`;
      globals.push('-d', flags.dcs);
      notes.push('no cluster name');
  }
  const name = rng.pick(Object.keys(COMMANDS));
  const spec = COMMANDS[name]!;
  const args: string[] = [];
  const opts: string[] = [];
  let commanderError = false;
  let help = false;
  let earlyUsage = false;
  let usage = false;
  let command: string = name;
  let positional = spec.args ? rng.int(spec.args.min, spec.args.max) : 0;
  for (let i = 0; i < positional; i++) args.push(rng.pick(spec.args!.values));
  if (spec.scopeArg && args.length > 0) scopeGiven = true;
  const optionNames = Object.keys(spec.opts);
  for (const req of spec.required ?? []) opts.push(req, rng.pick(valuesOf(spec.opts[req]!).good));
  for (let i = rng.int(0, 3); i > 0 && optionNames.length; i--) {
    const o = rng.pick(optionNames);
    const v = spec.opts[o];
    if (v === null) opts.push(o);
    else opts.push(o, rng.pick(valuesOf(v).good));
  }
  const changes = rng.chance(0.15) ? 0 : rng.chance(0.75) ? 1 : 2;
  let tail: string[] = [];
  for (let c = 0; c < changes; c++) {
    const kind = rng.weighted({
      typo: 3,
      unknownOption: 3,
      globalAfter: 2,
      missingValue: 2,
      badChoice: 2,
      badValue: 6,
      dropRequired: 2,
      tooMany: 2,
      conflict: 2,
      help: 1,
      repeat: 2,
      unicodeArg: 2,
      longArg: 1,
      dashDash: 1,
      emptyArg: 1,
    });
    switch (kind) {
      case 'typo':
        command = rng.pick(['lst', 'LIST', 'swithover', 'list ', '', 'ünï', 'x'.repeat(2000), 'help-me', 'restart2', '-', '--list']);
        commanderError = true;
        notes.push(`command ${JSON.stringify(command.slice(0, 20))}`);
        break;
      case 'unknownOption':
        opts.push(rng.pick(['--nope', '-z', '--Force', '--dry_run', '--formats', '-ff', '--candidate=']));
        // `--candidate=` is an empty value where --candidate is known, an unknown option elsewhere;
        // `-ff` is -f twice where -f is a switch (events).
        if ((opts[opts.length - 1] === '--candidate=' && Object.hasOwn(spec.opts, '--candidate')) || (opts[opts.length - 1] === '-ff' && spec.opts['-f'] === null)) {
          opts.pop();
          break;
        }
        commanderError = true;
        notes.push(`unknown option ${opts[opts.length - 1]}`);
        break;
      case 'globalAfter': {
        // A global option after the command: the command does not know it.
        const g = rng.pick(['-k', '--scope', '-n', '--dcs-url']);
        if (Object.hasOwn(spec.opts, g)) break;
        opts.push(g, ...(g === '-k' ? [] : ['x']));
        commanderError = true;
        notes.push(`global ${g} after the command`);
        break;
      }
      case 'missingValue': {
        const withValue = optionNames.filter((o) => spec.opts[o] !== null);
        if (!withValue.length) break;
        tail = [rng.pick(withValue)];
        commanderError = true;
        notes.push(`${tail[0]} without its value, last`);
        break;
      }
      case 'badChoice': {
        const choice = optionNames.find((o) => Array.isArray(spec.opts[o]) && ['-f', '--format', '-r'].includes(o));
        if (!choice) break;
        opts.push(choice, rng.pick(['xml', '', 'JSON', 'king', 'ünï']));
        commanderError = true;
        notes.push(`${choice} not one of its choices`);
        break;
      }
      case 'badValue': {
        const checked = optionNames.filter((o) => !Array.isArray(spec.opts[o]) && (spec.opts[o] as Values | null)?.bad?.length);
        if (!checked.length) break;
        const o = rng.pick(checked);
        const value = rng.pick((spec.opts[o] as Values).bad!);
        opts.push(o, value);
        usage = true;
        notes.push(`${o} ${JSON.stringify(value.slice(0, 40))}`);
        break;
      }
      case 'dropRequired': {
        // Only an option still there: a second drop would splice(-1, 2), taking the last option's value away.
        if (name === 'failover' && opts.includes('--candidate')) {
          opts.splice(opts.indexOf('--candidate'), 2);
        } else if (name === 'demote-cluster' && opts.includes('--host')) {
          opts.splice(opts.indexOf('--host'), 2);
        } else if (name === 'query') {
          while (opts.includes('-c')) opts.splice(opts.indexOf('-c'), 2);
        } else if (name === 'flush') {
          args.splice(0, args.length, rng.pick(['junk', 'Restart', 'switchovers']));
          usage = true;
        } else break;
        notes.push(`${name} without what it needs`);
        break;
      }
      case 'tooMany': {
        const max = spec.args?.max ?? 0;
        const variadic = max > 1 || name === 'restart' || name === 'reload' || name === 'reinit' || name === 'version' || name === 'flush';
        if (variadic) break;
        while (args.filter((a) => a !== '--').length <= max) args.push('extra');
        positional = args.length;
        commanderError = true;
        notes.push('too many arguments');
        break;
      }
      case 'conflict': {
        if (name === 'query') {
          opts.push('--file', '/nonexistent.sql');
        } else if (name === 'dsn') {
          if (rng.chance(0.5) && args.length === 0) {
            args.push('node1');
            opts.push('-m', 'node2');
          } else {
            if (args.length === 0) args.push('node1');
            opts.push('-r', 'replica');
          }
        } else if (name === 'edit-config') {
          opts.push('--apply', '-', '--replace', '-');
          usage = true;
        } else break;
        notes.push(`${name}: options that do not go together`);
        break;
      }
      case 'help':
        opts.push(rng.pick(['--help', '-h']));
        help = true;
        notes.push('help');
        break;
      case 'repeat': {
        // Not after a bad value: an alias (--pg-version, --db-version) repeated would put a good one last.
        if (usage) break;
        const i = opts.findIndex((o) => o.startsWith('-') && spec.opts[o] !== null && spec.opts[o] !== undefined);
        if (i < 0 || opts[i + 1] === undefined) break;
        // The same value again: the last one counts, and it is the same.
        opts.push(opts[i]!, opts[i + 1]!);
        notes.push(`${opts[i]} twice`);
        break;
      }
      case 'unicodeArg':
      case 'longArg':
      case 'emptyArg': {
        const nameOpt = optionNames.find((o) => spec.opts[o] === NAMES);
        const value = kind === 'unicodeArg' ? rng.pick(['ünï', '\u202e', '🙂', 'Ω'.repeat(50)]) : kind === 'longArg' ? 'n'.repeat(rng.int(1000, 100_000)) : '';
        if (nameOpt) {
          opts.push(nameOpt, value);
          notes.push(`${nameOpt} ${kind}`);
        } else if (spec.args && !spec.scopeArg && args.length < spec.args.max && spec.args.values === NAMES.good) {
          args.push(value);
          notes.push(`argument ${kind}`);
        }
        break;
      }
      case 'dashDash':
        if (!args.length || args[0] === '--') break;
        args.unshift('--');
        notes.push('-- before the arguments');
        break;
    }
  }
  // What `query`, `dsn` and `list` refuse depends on every option they were given, in the end.
  const last = (o: string) => {
    const i = opts.lastIndexOf(o);
    return i < 0 ? undefined : opts[i + 1];
  };
  if (name === 'query' && !commanderError) {
    const withSql = opts.includes('-c');
    const withFile = opts.includes('--file');
    // Both, or neither: refused; --file alone is read (and cannot be: exit 1) before the DCS is asked.
    usage = usage || withSql === withFile;
  }
  if (name === 'dsn') {
    const member = args.find((a) => a !== '--');
    const m = last('-m');
    if (member && m && member !== m) earlyUsage = true;
    if ((member || m) && opts.includes('-r')) usage = true;
  }
  // failover needs a candidate (the last one given, not empty); demote-cluster a host or a restore command.
  if (name === 'failover' && !last('--candidate')) usage = true;
  if (name === 'demote-cluster' && last('--host') === undefined && last('--restore-command') === undefined) usage = true;
  // -W wins over -w: the value of -w is not read then.
  if (name === 'list' && opts.includes('-W')) usage = false;
  // A value missing at the end would take `--` for its value: there is no `--` then.
  if (tail.length && args[0] === '--') args.shift();
  // `--` puts every option after it among the arguments: only arguments follow it.
  const argv = args[0] === '--' ? [...globals, command, ...opts, ...args, ...tail] : [...globals, command, ...args, ...opts, ...tail];
  const versionOnly = name === 'version' && args.length === 0;
  // The cluster named by list, topology or remove is read as --scope is (the file's then is not).
  const scopeArg = spec.scopeArg ? args.find((a) => a !== '--') : undefined;
  if (scopeArg) flags.scope = scopeArg;
  return { argv, ...(config ? { config } : {}), notes, commanderError, help, earlyUsage, usage, scopeGiven, versionOnly, flags };
}

/** The exit codes a case may end with, given what its config file holds (valid or not, with a cluster name or not). */
export function expectedCodes(c: CtlCase, config: { readonly valid: boolean; readonly scope: boolean }): readonly number[] {
  if (c.help && !c.commanderError) return [0];
  if (c.commanderError) return c.help ? [0, 2] : [2];
  if (c.earlyUsage) return [2];
  if (!config.valid) return [1];
  if (!c.scopeGiven && !config.scope) return c.versionOnly ? [0] : [1];
  if (c.usage) return [2];
  return [1];
}
