/**
 * `warden/testing`: fakes to unit-test failover policies and tools with, without PostgreSQL,
 * etcd or sockets, and the HA loop to drive over them.
 *
 * - `FakeClock`: time moves only when told (`advance`, `set`);
 * - `InMemoryKeyValueSpace` + `InMemoryClusterStore`: an etcd in memory (leases, compare-and-set,
 *   watches), shared by the nodes of a test;
 * - `FakeDatabase` (+ `FakeDatabaseNetwork` for replication between them): a PostgreSQL server
 *   that starts, stops, promotes, streams and crashes in memory;
 * - `FakeWatchdog`, `FakeHookScripts` (a `pre_promote` that succeeds or refuses), `MemoryLogger`, `NullLogger`;
 * - `HaLoop` with `fixedSettings`: one agent over any ports;
 * - `TestCluster`: several agents on one fake clock, to drive failovers in fake time.
 */
import 'reflect-metadata';

export { FakeClock, flushMicrotasks } from './adapters/clock/fake-clock.js';
export { InMemoryKeyValueSpace, InMemoryKeyValue, type InMemoryKeyValueSpaceOptions, type InMemoryKeyValueOptions } from './adapters/cluster-store/in-memory-key-value.js';
export { InMemoryClusterStore, type InMemoryClusterStoreOptions } from './adapters/cluster-store/in-memory-cluster-store.js';
export { FakeDatabase, FakeDatabaseNetwork, type FakeDatabaseOptions, type FakeDatabaseOp, type AcknowledgedWrite, type WalRecord } from './adapters/database/fake-database.js';
export { FakeWatchdog, type FakeWatchdogOptions } from './adapters/watchdog/fake-watchdog.js';
export { FakeHookScripts } from './adapters/callbacks/fake-hook-scripts.js';
export { MemoryLogger, type MemoryLogLine, type LogLevel } from './adapters/logger/memory-logger.js';
export { NullLogger } from './adapters/logger/null-logger.js';
export { HaLoop } from './app/agent/ha-loop.js';
export { AgentSettingsSource, HaLoopOptions, fixedSettings, type AgentSettings } from './app/agent/tokens.js';
export { TestCluster, type TestClusterOptions, type TestNode, type TestNodeOptions, type TestCut } from './app/testing/test-cluster.js';
