import { stringify } from 'yaml';
import type { LOG_LEVELS } from '../../src/app/agent/local-config-schema.js';

/** One node of a local cluster: member name and ports (on loopback unless `host` says otherwise). */
export interface NodeLayout {
  readonly name: string;
  readonly apiPort: number;
  readonly pgPort: number;
  /** Address the node's API and PostgreSQL listen on; default 127.0.0.1. */
  readonly host?: string;
  /** Network namespace the node's agent runs in (`ip netns exec`); default none. */
  readonly netns?: string;
  /** Extra tags of the node. */
  readonly tags?: Readonly<Record<string, unknown>>;
}

/** One member of the cluster's etcd. */
export interface EtcdMemberLayout {
  readonly name: string;
  readonly host: string;
  readonly netns?: string;
}

/** The etcd members of a layout (one unless etcdMembers lists several). */
export function etcdMembers(layout: ClusterLayout): readonly EtcdMemberLayout[] {
  return layout.etcdMembers ?? [{ name: 'warden-etcd', host: layout.etcdHost ?? '127.0.0.1', ...(layout.etcdNetns ? { netns: layout.etcdNetns } : {}) }];
}

/** The address a node listens on. */
export function nodeHost(node: NodeLayout): string {
  return node.host ?? '127.0.0.1';
}

/** Where and how a local cluster (one etcd + N agents) runs. */
export interface ClusterLayout {
  /** Folder holding every node's data, logs and the PID state file. */
  readonly dir: string;
  readonly scope: string;
  readonly namespace: string;
  readonly etcdClientPort: number;
  readonly etcdPeerPort: number;
  /** Address etcd listens on; default 127.0.0.1. */
  readonly etcdHost?: string;
  /** Network namespace etcd runs in; default none. */
  readonly etcdNetns?: string;
  /** The members of a multi-member etcd (each on its own address, same ports); default one member at etcdHost. */
  readonly etcdMembers?: readonly EtcdMemberLayout[];
  /** The etcd address is a proxy in front of etcd (a benchmark's byte-counting relay): the agents call only it. */
  readonly etcdProxy?: boolean;
  /** Extra `db.parameters` of every node's local file. */
  readonly dbParameters?: Readonly<Record<string, unknown>>;
  readonly nodes: readonly NodeLayout[];
  /** bootstrap.dcs of the generated node files. */
  readonly dcs: Readonly<Record<string, unknown>>;
  /** REST API Basic auth, when asked for. */
  readonly restAuth?: { readonly username: string; readonly password: string };
  readonly binDir: string;
  /** bootstrap.initdb of the generated node files; default `[{encoding: UTF8}, data-checksums]`. */
  readonly initdb?: readonly (string | Readonly<Record<string, string>>)[];
  /** Node flags of the agents instead of the launcher's shebang flags (benchmarks comparing V8 settings). */
  readonly agentNodeArgs?: readonly string[];
  /** `db.callbacks` of every node; `{name}` in a command becomes the node's name. */
  readonly callbacks?: Readonly<Record<string, string>>;
  /** `db.pre_promote` and `db.before_stop` of every node; `{name}` becomes the node's name. */
  readonly hooks?: Readonly<Partial<Record<'pre_promote' | 'before_stop', string>>>;
  /** `bootstrap.post_bootstrap` of every node; `{name}` becomes the node's name. */
  readonly postBootstrap?: string;
  /** `log.level` of every node; default the agent's own (info). */
  readonly logLevel?: (typeof LOG_LEVELS)[number];
}

/** Demo defaults: etcd 2379, APIs 8008-8010, PostgreSQL 15432-15434, each overridable. */
export function demoLayout(env: NodeJS.ProcessEnv = process.env): ClusterLayout {
  const num = (key: string, dflt: number) => (env[key] ? Number(env[key]) : dflt);
  const apiBase = num('WARDEN_DEMO_API_PORT', 8008);
  const pgBase = num('WARDEN_DEMO_PG_PORT', 15432);
  const auth = env['WARDEN_DEMO_AUTH'];
  return {
    dir: env['WARDEN_DEMO_DIR'] ?? `${env['TMPDIR'] ?? '/tmp'}/warden-demo`,
    scope: env['WARDEN_DEMO_SCOPE'] ?? 'demo',
    namespace: '/service',
    etcdClientPort: num('WARDEN_DEMO_ETCD_PORT', 2379),
    etcdPeerPort: num('WARDEN_DEMO_ETCD_PEER_PORT', 2380),
    nodes: [1, 2, 3].map((i) => ({ name: `node${i}`, apiPort: apiBase + i - 1, pgPort: pgBase + i - 1 })),
    dcs: {
      ttl: num('WARDEN_DEMO_TTL', 20),
      loop_wait: num('WARDEN_DEMO_LOOP_WAIT', 2),
      retry_timeout: num('WARDEN_DEMO_RETRY_TIMEOUT', 5),
      maximum_lag_on_failover: 1048576,
      db: { use_pg_rewind: true, use_slots: true, parameters: { max_connections: 100 } },
    },
    ...(auth ? { restAuth: { username: auth.split(':')[0]!, password: auth.split(':').slice(1).join(':') } } : {}),
    binDir: env['WARDEN_PG_BIN_DIR'] ?? '/usr/lib/postgresql/15/bin',
  };
}

/**
 * The demo's standby cluster: two nodes (`standby1`, `standby2`, REST APIs on the demo's API
 * base + 3 and + 4, PostgreSQL on its PostgreSQL base + 3 and + 4), scope `demo-standby`, the
 * demo's etcd, data beside the demo's folder, replicating from `remote` (the demo's primary).
 */
export function standbyDemoLayout(main: ClusterLayout, remote: { readonly host: string; readonly port: number }, env: NodeJS.ProcessEnv = process.env): ClusterLayout {
  const apiBase = (env['WARDEN_DEMO_API_PORT'] ? Number(env['WARDEN_DEMO_API_PORT']) : 8008) + 3;
  const pgBase = (env['WARDEN_DEMO_PG_PORT'] ? Number(env['WARDEN_DEMO_PG_PORT']) : 15432) + 3;
  return {
    ...main,
    dir: `${main.dir}-standby`,
    scope: `${main.scope}-standby`,
    nodes: [1, 2].map((i) => ({ name: `standby${i}`, apiPort: apiBase + i - 1, pgPort: pgBase + i - 1 })),
    dcs: { ...main.dcs, standby_cluster: { host: remote.host, port: remote.port } },
  };
}

/** Path of a node's YAML configuration file. */
export function nodeConfigPath(layout: ClusterLayout, name: string): string {
  return `${layout.dir}/${name}.yml`;
}

/** Where a node's fencer listens (its PID file is next to it, `<socket>.pid`). */
export function fencerSocketPath(layout: ClusterLayout, name: string): string {
  return `${layout.dir}/${name}/fencer.sock`;
}

/** The node's local YAML configuration. */
export function nodeYaml(layout: ClusterLayout, node: NodeLayout, extra: { tags?: Record<string, unknown>; db?: { parameters?: Record<string, unknown>; pg_hba?: string[]; pg_ident?: string[] } } = {}): string {
  const api = `${nodeHost(node)}:${node.apiPort}`;
  const pg = `${nodeHost(node)}:${node.pgPort}`;
  return stringify({
    scope: layout.scope,
    namespace: layout.namespace,
    name: node.name,
    restapi: {
      listen: api,
      connect_address: api,
      ...(layout.restAuth ? { authentication: layout.restAuth } : {}),
    },
    etcd3: { hosts: etcdMembers(layout).map((m) => `${m.host}:${layout.etcdClientPort}`), ...(layout.etcdProxy ? { use_proxies: true } : {}) },
    bootstrap: {
      dcs: layout.dcs,
      initdb: layout.initdb ?? [{ encoding: 'UTF8' }, 'data-checksums'],
      ...(layout.postBootstrap ? { post_bootstrap: layout.postBootstrap.replaceAll('{name}', node.name) } : {}),
    },
    db: {
      listen: pg,
      connect_address: pg,
      data_dir: `${layout.dir}/${node.name}/data`,
      bin_dir: layout.binDir,
      authentication: {
        superuser: { username: 'postgres', password: 'warden-demo-su' },
        replication: { username: 'replicator', password: 'warden-demo-rep' },
        // pg_rewind logs in as a role of its own, not the superuser.
        rewind: { username: 'rewinder', password: 'warden-demo-rw' },
      },
      parameters: { ...(layout.dbParameters ?? {}), ...(extra.db?.parameters ?? {}) },
      ...(extra.db?.pg_hba ? { pg_hba: extra.db.pg_hba } : {}),
      ...(extra.db?.pg_ident ? { pg_ident: extra.db.pg_ident } : {}),
      ...(layout.callbacks ? { callbacks: Object.fromEntries(Object.entries(layout.callbacks).map(([k, v]) => [k, v.replaceAll('{name}', node.name)])) } : {}),
      ...Object.fromEntries(Object.entries(layout.hooks ?? {}).map(([k, v]) => [k, v.replaceAll('{name}', node.name)])),
    },
    // Only the node's own tags: defaults written out would show in every `list` as a Tags column that says nothing.
    tags: { ...(node.tags ?? {}), ...(extra.tags ?? {}) },
    watchdog: { mode: 'off' },
    ...(layout.logLevel ? { log: { level: layout.logLevel } } : {}),
    // Inside the cluster's folder, so the runner finds the fencer's PID file and stops it too.
    fencer: { socket: fencerSocketPath(layout, node.name) },
  });
}
