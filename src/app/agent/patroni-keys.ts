import type { Problem } from '../../domain/errors.js';

/**
 * Patroni keys that a converted file may still hold, and what to do with each: an "unknown
 * field" alone leaves the operator guessing whether Warden does the same thing another way.
 */
const PATRONI_KEYS: Readonly<Record<string, string>> = {
  postgresql: "Patroni's postgresql section is called db in Warden",
  etcd: 'Warden speaks to etcd v3 only: use an etcd3 section (hosts, protocol, username, password, cacert, cert, key)',
  consul: 'Warden speaks to etcd v3 only: use an etcd3 section',
  zookeeper: 'Warden speaks to etcd v3 only: use an etcd3 section',
  kubernetes: 'Warden speaks to etcd v3 only: use an etcd3 section',
  raft: 'Warden speaks to etcd v3 only: use an etcd3 section',
  'db.pgpass': 'Patroni\'s pgpass has no equivalent: the agent writes its own password file (warden.pgpass in the data directory); remove it',
  'db.config_dir':
    "Patroni's config_dir has no equivalent: the agent keeps postgresql.conf and pg_hba.conf in db.data_dir; copy <config_dir>/postgresql.base.conf into the data directory (without its data_directory, hba_file, ident_file and include lines) or move its settings into db.parameters, then remove the key",
  'db.use_unix_socket_repl': 'replicas connect over TCP to db.connect_address; remove it',
  'db.create_replica_method': "Patroni's older spelling: rename it create_replica_methods",
  'bootstrap.pg_hba': 'put these lines in db.pg_hba (on every node)',
  'bootstrap.users': 'no equivalent (Patroni 4 dropped it too): create the roles from a bootstrap.post_bootstrap script; remove it',
  'bootstrap.post_init': "Patroni's other name for bootstrap.post_bootstrap: rename it",
  'etcd3.host': 'Warden takes a list: write etcd3.hosts: [host:port] (every member, or one; the others are learned from etcd)',
};

/** The problems, with what to do instead for an unknown field that is a Patroni key. */
export function withPatroniHints(problems: readonly Problem[]): Problem[] {
  return problems.map((p) => {
    // Own keys only: a field named `constructor` or `__proto__` is no Patroni key.
    const hint = p.message === 'unknown field' && Object.hasOwn(PATRONI_KEYS, p.path) ? PATRONI_KEYS[p.path] : undefined;
    return hint ? { path: p.path, message: `unknown field: ${hint}` } : p;
  });
}
