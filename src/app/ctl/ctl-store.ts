import { SystemClock } from '../../adapters/clock/system-clock.js';
import { Etcd3GatewayKeyValue } from '../../adapters/cluster-store/etcd3-gateway-key-value.js';
import { KeyValueClusterStore } from '../../adapters/cluster-store/key-value-cluster-store.js';
import { clusterPrefix } from '../../adapters/cluster-store/keys.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import type { CtlConfig } from './ctl-config.js';
import { WarningLogger } from './warning-logger.js';

/** How long one DCS call may take before wardenctl gives up on it. */
export const DCS_TIMEOUT_MS = 10_000;

/**
 * How long wardenctl tries again while no etcd member takes a connection (refused, no route):
 * long enough for a member restarting, short enough that a wrong address or a stopped etcd
 * is said at once rather than after the whole call timeout.
 */
export const DCS_UNREACHABLE_RETRY_MS = 2_000;

/**
 * The cluster store wardenctl reads and writes: etcd through its JSON gateway, which needs
 * no gRPC stack (loading one costs a short-lived command more than the call itself).
 * `timeoutMs` bounds each call (tests give a shorter one).
 */
export function ctlClusterStore(config: CtlConfig, scope: string, warn: (line: string) => void, timeoutMs: number = DCS_TIMEOUT_MS): ClusterStore {
  const kv = new Etcd3GatewayKeyValue({
    hosts: config.etcd.hosts,
    prefix: clusterPrefix(config.namespace, scope),
    retryTimeoutMs: timeoutMs,
    unreachableRetryMs: Math.min(timeoutMs, DCS_UNREACHABLE_RETRY_MS),
    // One read per command: any member's answer will do (no round to the raft leader).
    serializableReads: true,
    protocol: config.etcd.protocol,
    ...(config.etcd.username !== undefined ? { username: config.etcd.username, password: config.etcd.password ?? '' } : {}),
    ...(config.etcd.cacert ? { cacert: config.etcd.cacert } : {}),
    ...(config.etcd.cert ? { cert: config.etcd.cert } : {}),
    ...(config.etcd.key ? { key: config.etcd.key } : {}),
  });
  return new KeyValueClusterStore(kv, new SystemClock(), new WarningLogger(warn));
}
