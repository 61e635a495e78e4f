/** `host:port` (IPv6 hosts in brackets); the port 1-65535 is checked after the pattern. */
const hostPort = {
  type: 'string',
  pattern: '^(\\[[0-9A-Fa-f:.]+\\]|[^:\\[\\]\\s]*):\\d{1,5}$',
  description: 'host:port',
} as const;
const nonEmpty = { type: 'string', minLength: 1 } as const;
const scalar = { type: ['string', 'number', 'boolean'] } as const;
/** Levels of `log.level` and `log.levels.<component>`. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
/**
 * A PostgreSQL role the agent logs in as: a plain name (letters, digits, `_ . @ $ -`, at most
 * 63), so that it reads the same in pg_hba.conf, a conninfo and SQL, never as a pg_hba keyword
 * list (`a,b`) or a second field.
 */
const roleCredentials = {
  type: 'object',
  additionalProperties: false,
  required: ['username'],
  properties: {
    username: { type: 'string', pattern: '^[A-Za-z0-9_][A-Za-z0-9_.@$-]{0,62}$', description: 'a role name of letters, digits and _ . @ $ - (at most 63)' },
    password: { type: 'string' },
  },
} as const;

const credentials = {
  type: 'object',
  additionalProperties: false,
  required: ['username'],
  properties: { username: nonEmpty, password: { type: 'string' } },
} as const;

/**
 * JSON schema of the node's local YAML file. Unknown keys are refused everywhere
 * except `tags`, `db.parameters` and `bootstrap.dcs` (the dynamic configuration, checked by
 * its own validator), so a typo is reported instead of silently ignored. Method sections
 * (`db.<name>`, `bootstrap.<name>` with a command) are taken out before this schema applies
 * and checked by their own (local-config-methods.ts).
 */
export const LOCAL_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['scope', 'name', 'restapi', 'etcd3', 'db'],
  properties: {
    scope: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', description: 'a cluster name of letters, digits, ".", "_" or "-"' },
    namespace: { type: 'string', pattern: '^/?[A-Za-z0-9._/-]*$', description: 'a path such as /service' },
    name: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', description: 'a member name of letters, digits, ".", "_" or "-"' },
    restapi: {
      type: 'object',
      additionalProperties: false,
      required: ['listen'],
      properties: {
        listen: hostPort,
        connect_address: hostPort,
        authentication: credentials,
        certfile: nonEmpty,
        keyfile: nonEmpty,
        keyfile_password: { type: 'string' },
        cafile: nonEmpty,
        verify_client: { enum: ['none', 'optional', 'required'] },
        allowlist: { type: 'array', items: nonEmpty },
        allowlist_include_members: { type: 'boolean' },
        http_extra_headers: { type: 'object', additionalProperties: { type: 'string' } },
        event_history: { type: 'integer', minimum: 1, maximum: 100000 },
      },
    },
    etcd3: {
      type: 'object',
      additionalProperties: false,
      required: ['hosts'],
      properties: {
        hosts: { type: 'array', minItems: 1, items: nonEmpty },
        protocol: { enum: ['http', 'https'] },
        username: nonEmpty,
        password: { type: 'string' },
        cacert: nonEmpty,
        cert: nonEmpty,
        key: nonEmpty,
        /** The hosts are proxies or load balancers: call only them, never the members etcd advertises. */
        use_proxies: { type: 'boolean' },
      },
    },
    bootstrap: {
      type: 'object',
      additionalProperties: false,
      properties: {
        dcs: { type: 'object' },
        /** `initdb` (default) or the name of a custom bootstrap method defined as `bootstrap.<name>`. */
        method: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_-]*$', description: 'initdb or a method name' },
        initdb: {
          oneOf: [
            {
              type: 'array',
              items: {
                description: 'a flag such as data-checksums, or an option such as {encoding: UTF8}',
                oneOf: [nonEmpty, { type: 'object', additionalProperties: { type: ['string', 'number'] } }],
              },
            },
            // One mapping, as Patroni also takes it: {encoding: UTF8, data-checksums: true}.
            { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } },
          ],
        },
        /** A script run once on the new primary after the bootstrap, given the superuser's URL: the cluster is registered only when it succeeds. */
        post_bootstrap: nonEmpty,
      },
    },
    db: {
      type: 'object',
      additionalProperties: false,
      required: ['listen', 'data_dir', 'authentication'],
      properties: {
        listen: hostPort,
        connect_address: hostPort,
        data_dir: nonEmpty,
        bin_dir: nonEmpty,
        log_dir: nonEmpty,
        authentication: {
          type: 'object',
          additionalProperties: false,
          required: ['superuser', 'replication'],
          properties: { superuser: roleCredentials, replication: roleCredentials, rewind: roleCredentials },
        },
        parameters: { type: 'object', additionalProperties: scalar },
        pg_hba: { type: 'array', items: { type: 'string' } },
        /** The whole of pg_ident.conf: `MAPNAME SYSTEM-USERNAME DATABASE-USERNAME` lines. */
        pg_ident: { type: 'array', items: { type: 'string' } },
        /** The agent (and the post_bootstrap script) reach the server over its Unix socket instead of TCP on loopback. */
        use_unix_socket: { type: 'boolean' },
        callbacks: {
          type: 'object',
          additionalProperties: false,
          properties: { on_start: nonEmpty, on_stop: nonEmpty, on_restart: nonEmpty, on_reload: nonEmpty, on_role_change: nonEmpty },
        },
        callback_timeout: { type: 'number', exclusiveMinimum: 0 },
        /** A fencing script run after the leader key is taken and before the promotion: a failure cancels the promotion. */
        pre_promote: nonEmpty,
        /** A script run before the agent stops the server (fast or smart stop); the stop waits for it. */
        before_stop: nonEmpty,
        /** How replicas are created, tried in order: `basebackup` or methods defined as `db.<name>`. */
        create_replica_methods: {
          type: 'array',
          minItems: 1,
          uniqueItems: true,
          items: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_-]*$', description: 'basebackup or a method name' },
        },
        /** Extra pg_basebackup options: `{max-rate: 100M}` or `[verbose, {max-rate: 100M}]`. */
        basebackup: {
          description: 'pg_basebackup options, a map or a list of flags and one-key maps',
          oneOf: [
            { type: 'object', additionalProperties: scalar },
            { type: 'array', items: { oneOf: [nonEmpty, { type: 'object', minProperties: 1, maxProperties: 1, additionalProperties: scalar }] } },
          ],
        },
        /** Recovery settings of this node as a replica (restore_command, recovery_min_apply_delay...). */
        recovery_conf: { type: 'object', additionalProperties: scalar },
      },
    },
    tags: {
      type: 'object',
      // The topology tags are typed (environment overrides convert to these types); every other tag is a scalar.
      properties: {
        failover_priority: { type: 'integer', minimum: 0 },
        sync_priority: { type: 'integer', minimum: 0 },
        nostream: { type: 'boolean' },
        replicatefrom: { type: 'string', pattern: '^[A-Za-z0-9._-]+$', description: 'a member name of letters, digits, ".", "_" or "-"' },
      },
      additionalProperties: scalar,
    },
    watchdog: {
      type: 'object',
      additionalProperties: false,
      properties: {
        mode: { enum: ['off', 'automatic', 'required'] },
        device: nonEmpty,
        safety_margin: { type: 'integer', minimum: 0 },
      },
    },
    fencer: {
      type: 'object',
      additionalProperties: false,
      properties: {
        enabled: { type: 'boolean' },
        socket: nonEmpty,
      },
    },
    log: {
      type: 'object',
      additionalProperties: false,
      properties: {
        level: { enum: LOG_LEVELS },
        format: { enum: ['json', 'text'] },
        file: nonEmpty,
        levels: { type: 'object', additionalProperties: { enum: LOG_LEVELS } },
      },
    },
  },
} as const;

/** Top-level keys whose value is a plain scalar (`WARDEN_NAME`), not a section. */
export const SCALAR_KEYS = ['scope', 'namespace', 'name'] as const;

/** Sections that environment variables may override key by key (`WARDEN_RESTAPI_LISTEN`). */
export const ENV_SECTIONS = ['restapi', 'etcd3', 'db', 'tags', 'watchdog', 'fencer', 'log'] as const;

/** Environment keys that land deeper than `<section>.<key>` (credentials, as operators name them). */
export const ENV_NESTED_KEYS: Readonly<Record<string, readonly string[]>> = {
  RESTAPI_USERNAME: ['restapi', 'authentication', 'username'],
  RESTAPI_PASSWORD: ['restapi', 'authentication', 'password'],
  DB_SUPERUSER_USERNAME: ['db', 'authentication', 'superuser', 'username'],
  DB_SUPERUSER_PASSWORD: ['db', 'authentication', 'superuser', 'password'],
  DB_REPLICATION_USERNAME: ['db', 'authentication', 'replication', 'username'],
  DB_REPLICATION_PASSWORD: ['db', 'authentication', 'replication', 'password'],
  DB_REWIND_USERNAME: ['db', 'authentication', 'rewind', 'username'],
  DB_REWIND_PASSWORD: ['db', 'authentication', 'rewind', 'password'],
};
