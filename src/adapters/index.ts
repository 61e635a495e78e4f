/**
 * `warden/adapters`: the production adapters of the ports, to build an agent (or a tool)
 * with some of them swapped. Importing this module loads the drivers (pg, etcd3).
 */
export { SystemClock } from './clock/system-clock.js';
export { MonotonicClock } from './clock/monotonic-clock.js';
export { Etcd3ClusterStore, type Etcd3ClusterStoreOptions } from './cluster-store/etcd3-cluster-store.js';
export { Etcd3KeyValue, type Etcd3KeyValueOptions } from './cluster-store/etcd3-key-value.js';
export { Etcd3GatewayKeyValue, type Etcd3GatewayKeyValueOptions } from './cluster-store/etcd3-gateway-key-value.js';
export { Etcd3GatewayClusterStore, type Etcd3GatewayClusterStoreOptions } from './cluster-store/etcd3-gateway-cluster-store.js';
export { KeyValueClusterStore, type KeyValueClusterStoreOptions } from './cluster-store/key-value-cluster-store.js';
export type { KeyValueStore, PutOptions, RevisionedSnapshot, WatchInfo, WriteCondition } from './cluster-store/key-value.js';
export { clusterPrefix, ClusterKey, type DcsEntry, type DcsSnapshot } from './cluster-store/keys.js';
export { parseCluster, type ParsedCluster } from './cluster-store/codec.js';
export { PgDatabase, type PgDatabaseOptions } from './database/pg-database.js';
export { PgSqlClient, type PgSqlClientOptions } from './sql/pg-sql-client.js';
export { createAgentApi, type AgentApi, type AgentApiDeps, type AgentApiOptions } from './http/agent-api.js';
export type { AccessSettings } from './http/auth.js';
export { createAgentServer, splitListen, type AgentServer, type AgentServerOptions, type TlsSettings } from './http/server.js';
export { AgentMetrics } from './metrics/agent-metrics.js';
export { EventLoopDelayMonitor, type EventLoopDelaySource, type EventLoopDelayWindow } from './metrics/event-loop-delay.js';
export { HttpPeerApi, type HttpPeerApiOptions } from './peer/http-peer-api.js';
export { LinuxWatchdog, type LinuxWatchdogOptions } from './watchdog/linux-watchdog.js';
export { NoopWatchdog } from './watchdog/noop-watchdog.js';
export { JsonLinesLogger, type JsonLinesLoggerOptions } from './logger/json-lines-logger.js';
export { NullLogger } from './logger/null-logger.js';
export { MemoryLogger } from './logger/memory-logger.js';
