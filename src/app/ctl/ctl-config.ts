import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { NODE_FILE_LIMITS, parseYamlText, readConfigText, type YamlIssue } from '../yaml-read.js';
import type { Problem } from '../../domain/errors.js';
import { CtlError } from './errors.js';

/** Basic-auth credentials. */
export interface Credentials {
  readonly username: string;
  readonly password: string;
}

/** Everything wardenctl needs to reach a cluster, from its config file and flags. */
export interface CtlConfig {
  /** Cluster name; null when neither the file nor `--scope` gave one. */
  readonly scope: string | null;
  readonly namespace: string;
  readonly etcd: {
    readonly hosts: readonly string[];
    readonly protocol: 'http' | 'https';
    readonly username?: string;
    readonly password?: string;
    readonly cacert?: string;
    readonly cert?: string;
    readonly key?: string;
  };
  readonly rest: {
    readonly auth?: Credentials;
    /** File paths of the PEM CA, client certificate and key. */
    readonly cacert?: string;
    readonly certfile?: string;
    readonly keyfile?: string;
    readonly insecure: boolean;
  };
  /** Database login for `query` (the node file's superuser, or `ctl.db`). */
  readonly db: { readonly username?: string; readonly password?: string; readonly dbname?: string };
}

/** Command-line values that override the file. */
export interface CtlFlags {
  readonly config?: string;
  readonly dcs?: string;
  readonly scope?: string;
  readonly namespace?: string;
  /** Do not verify the agents' TLS certificates (`-k`). */
  readonly insecure?: boolean;
}

/** Defaults when neither file nor flags say otherwise. */
export const CTL_DEFAULTS = { namespace: '/service', dcs: '127.0.0.1:2379' } as const;

type Obj = Record<string, unknown>;

/** Reads typed values from the parsed YAML, collecting every problem. */
class Reader {
  readonly problems: Problem[] = [];
  constructor(private readonly root: Obj) {}

  private at(path: string): unknown {
    let cur: unknown = this.root;
    for (const part of path.split('.')) {
      if (cur === null || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
      cur = (cur as Obj)[part];
    }
    return cur;
  }
  string(path: string): string | undefined {
    const v = this.at(path);
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    this.problems.push({ path, message: `expected a string, got ${Array.isArray(v) ? 'a list' : typeof v}` });
    return undefined;
  }
  boolean(path: string): boolean {
    const v = this.at(path);
    if (v === undefined || v === null) return false;
    if (typeof v === 'boolean') return v;
    this.problems.push({ path, message: `expected true or false, got ${typeof v}` });
    return false;
  }
  hosts(path: string): string[] | undefined {
    const v = this.at(path);
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return splitHosts(v);
    if (Array.isArray(v) && v.every((h) => typeof h === 'string')) return v.flatMap((h: string) => splitHosts(h));
    this.problems.push({ path, message: 'expected a list of host:port strings' });
    return undefined;
  }
  credentials(path: string): Credentials | undefined {
    const username = this.string(`${path}.username`);
    const password = this.string(`${path}.password`);
    return username === undefined ? undefined : { username, password: password ?? '' };
  }
}

/**
 * Hosts of a comma list. `etcd3://host:port` and `etcd://host:port` (the DCS URL form
 * patronictl takes) become `host:port`; `http(s)://` URLs stay as they are.
 */
function splitHosts(s: string): string[] {
  return s
    .split(',')
    .map((h) => h.trim().replace(/^etcd3?:\/\//, '').replace(/\/+$/, ''))
    .filter(Boolean);
}

/**
 * Builds the configuration from a YAML text (a wardenctl file or an agent's node file:
 * both carry `scope`, `namespace`, `etcd3` and `restapi.authentication`) and the flags.
 */
export function parseCtlConfig(text: string | null, source: string, flags: CtlFlags): CtlConfig {
  let doc: unknown = {};
  if (text !== null) {
    // Bounded and checked as the agent reads its node file (wardenctl reads those too).
    const parsed = parseYamlText(text, NODE_FILE_LIMITS);
    if (parsed.issues.length) throw new CtlError('config_invalid', `${source}: not valid YAML (${issueText(parsed.issues[0]!)}${parsed.issues.length > 1 ? `; and ${parsed.issues.length - 1} more` : ''})`);
    doc = parsed.value ?? {};
    if (typeof doc !== 'object' || Array.isArray(doc)) throw new CtlError('config_invalid', `${source}: expected a YAML mapping`);
  }
  const r = new Reader(doc as Obj);
  const protocol = r.string('etcd3.protocol') ?? 'http';
  if (protocol !== 'http' && protocol !== 'https') r.problems.push({ path: 'etcd3.protocol', message: `expected http or https, got ${protocol}` });
  const superuser = r.credentials('db.authentication.superuser');
  // An agent's node file: where its API asks for client certificates, the node's own (which it
  // presents to its peers) is wardenctl's too, unless the file names one for wardenctl.
  const verifyClient = r.string('restapi.verify_client');
  const nodeCert = verifyClient === 'optional' || verifyClient === 'required' ? r.string('restapi.certfile') : undefined;
  const nodeKey = nodeCert !== undefined ? (r.string('restapi.keyfile') ?? nodeCert) : undefined;
  const ctlDb = r.credentials('ctl.db');
  const config: CtlConfig = {
    scope: flags.scope ?? r.string('scope') ?? null,
    namespace: flags.namespace ?? r.string('namespace') ?? CTL_DEFAULTS.namespace,
    etcd: {
      hosts: flags.dcs ? splitHosts(flags.dcs) : (r.hosts('etcd3.hosts') ?? r.hosts('etcd3.host') ?? [CTL_DEFAULTS.dcs]),
      protocol: protocol === 'https' ? 'https' : 'http',
      ...opt('username', r.string('etcd3.username')),
      ...opt('password', r.string('etcd3.password')),
      ...opt('cacert', r.string('etcd3.cacert')),
      ...opt('cert', r.string('etcd3.cert')),
      ...opt('key', r.string('etcd3.key')),
    },
    rest: {
      ...opt('auth', r.credentials('ctl.authentication') ?? r.credentials('restapi.authentication')),
      ...opt('cacert', r.string('ctl.cacert') ?? r.string('restapi.cafile')),
      ...opt('certfile', r.string('ctl.certfile') ?? nodeCert),
      ...opt('keyfile', r.string('ctl.certfile') !== undefined ? r.string('ctl.keyfile') : nodeKey),
      insecure: r.boolean('ctl.insecure') || !!flags.insecure,
    },
    db: {
      ...opt('username', ctlDb?.username ?? superuser?.username),
      ...opt('password', ctlDb?.password ?? superuser?.password),
      ...opt('dbname', r.string('ctl.db.dbname')),
    },
  };
  if (r.problems.length) {
    throw new CtlError('config_invalid', `${source}: ${r.problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
  }
  return config;
}

function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** A YAML issue in one line: where, then what. */
function issueText(issue: YamlIssue): string {
  const where = issue.line !== undefined ? `line ${issue.line}, column ${issue.col ?? 1}: ` : issue.path ? `${issue.path}: ` : '';
  return `${where}${issue.message}`;
}

/** The per-user file read when neither `-c` nor `$WARDENCTL_CONFIG` names one: `$XDG_CONFIG_HOME/wardenctl.yml`, else `~/.config/wardenctl.yml`. */
export function userCtlConfigPath(env: NodeJS.ProcessEnv): string | null {
  const base = env['XDG_CONFIG_HOME'] || (env['HOME'] ? join(env['HOME'], '.config') : null);
  return base ? join(base, 'wardenctl.yml') : null;
}

/** Loads the configuration: file from `-c`, else `$WARDENCTL_CONFIG`, else the user's file if there is one; then the flags. */
export function loadCtlConfig(flags: CtlFlags, env: NodeJS.ProcessEnv = process.env): CtlConfig {
  const userFile = userCtlConfigPath(env);
  const path = flags.config ?? env['WARDENCTL_CONFIG'] ?? (userFile && existsSync(userFile) ? userFile : undefined);
  if (!path) return parseCtlConfig(null, 'flags', flags);
  const read = readConfigText(path, NODE_FILE_LIMITS);
  if ('issue' in read) {
    if (read.unreadable) throw new CtlError('config_unreadable', `cannot read config file ${path}: ${read.issue.message.replace(/^(E[A-Z]+):.*$/, '$1')}`);
    throw new CtlError('config_invalid', `${path}: ${issueText(read.issue)}`);
  }
  return parseCtlConfig(read.text, path, flags);
}

/** The cluster name, or a clear error telling how to give one. */
export function requireScope(config: CtlConfig): string {
  if (!config.scope) throw new CtlError('no_scope', 'no cluster name: give --scope NAME or a config file with `scope:` (-c FILE, WARDENCTL_CONFIG or ~/.config/wardenctl.yml)');
  return config.scope;
}
