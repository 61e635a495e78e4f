import { readFileSync } from 'node:fs';

/** Options of `Etcd3KeyValue` (the `etcd3:` section of the local config, plus the cluster prefix). */
export interface Etcd3KeyValueOptions {
  /** `host:port` or `http(s)://host:port`. */
  readonly hosts: readonly string[];
  /** Cluster prefix from `clusterPrefix(namespace, scope)`, e.g. `/service/demo/`. */
  readonly prefix: string;
  /** Upper bound of every call (`retry_timeout`), in milliseconds. */
  readonly retryTimeoutMs: number;
  readonly username?: string;
  readonly password?: string;
  /** Scheme for hosts given without one; default `https` when TLS files are set, else `http`. */
  readonly protocol?: 'http' | 'https';
  /** PEM file paths. */
  readonly cacert?: string;
  readonly cert?: string;
  readonly key?: string;
}

/** `host:port` with the scheme the options ask for (hosts that carry one keep it). */
export function etcd3HostUrls(opts: Etcd3KeyValueOptions): string[] {
  const scheme = opts.protocol ?? (opts.cacert || opts.cert ? 'https' : 'http');
  return opts.hosts.map((h) => (/^https?:\/\//.test(h) ? h : `${scheme}://${h}`));
}

/** The etcd credentials a running client can take anew: its TLS files (read again) and its etcd user. */
export type Etcd3Credentials = Pick<Etcd3KeyValueOptions, 'cacert' | 'cert' | 'key' | 'username' | 'password'>;

/** The TLS files of the options, read, for a plain HTTPS request to a member. */
export function etcd3TlsFiles(opts: Etcd3Credentials): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  return {
    ...(opts.cacert ? { ca: readFileSync(opts.cacert) } : {}),
    ...(opts.cert ? { cert: readFileSync(opts.cert) } : {}),
    ...(opts.key ? { key: readFileSync(opts.key) } : {}),
  };
}

