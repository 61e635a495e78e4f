import { etcd3HostUrls, type Etcd3Credentials, type Etcd3KeyValueOptions } from '../../adapters/cluster-store/etcd3-endpoints.js';
import { clusterPrefix } from '../../adapters/cluster-store/keys.js';
import type { LocalConfig } from './local-config-types.js';

/** `retry_timeout` of the bootstrap section when it sets none. */
export const DEFAULT_RETRY_TIMEOUT_SECONDS = 10;

/** The bootstrap section's `retry_timeout`, in milliseconds. */
export function retryTimeoutMs(cfg: LocalConfig): number {
  const v = cfg.bootstrap.dcs['retry_timeout'];
  return (typeof v === 'number' && v > 0 ? v : DEFAULT_RETRY_TIMEOUT_SECONDS) * 1000;
}

/** The credentials of the local file's `etcd3` section: TLS file paths and the etcd user. */
export function etcd3CredentialsOf(cfg: LocalConfig): Etcd3Credentials {
  const e = cfg.etcd3;
  return {
    ...(e.username !== undefined ? { username: e.username, password: e.password ?? '' } : {}),
    ...(e.cacert ? { cacert: e.cacert } : {}),
    ...(e.cert ? { cert: e.cert } : {}),
    ...(e.key ? { key: e.key } : {}),
  };
}

/**
 * How the agent and its fencer reach etcd: the local file's `etcd3` section and the cluster's
 * prefix; the members are learned from etcd unless the hosts are proxies (`use_proxies`).
 */
export function etcd3ConnectionOf(cfg: LocalConfig): Etcd3KeyValueOptions & { readonly discoverMembers: boolean } {
  return {
    discoverMembers: cfg.etcd3.use_proxies !== true,
    hosts: cfg.etcd3.hosts,
    prefix: clusterPrefix(cfg.namespace, cfg.scope),
    retryTimeoutMs: retryTimeoutMs(cfg),
    ...(cfg.etcd3.protocol ? { protocol: cfg.etcd3.protocol } : {}),
    ...etcd3CredentialsOf(cfg),
  };
}

/**
 * Whether a client started with `before` can take the credentials of `after` without a
 * restart: it reaches the same members with the same scheme (TLS files decide the scheme when
 * no protocol is given, so adding the first one or removing the last one needs a restart).
 */
export function etcd3CredentialsReloadable(before: LocalConfig, after: LocalConfig): boolean {
  const urls = (cfg: LocalConfig) => etcd3HostUrls(etcd3ConnectionOf(cfg)).join(',');
  return urls(before) === urls(after);
}
