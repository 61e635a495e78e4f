import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { FakeDatabase } from '../../../../src/adapters/database/fake-database.js';
import { NullLogger } from '../../../../src/adapters/logger/null-logger.js';
import { FakeWatchdog } from '../../../../src/adapters/watchdog/fake-watchdog.js';
import { HaLoop } from '../../../../src/app/agent/ha-loop.js';
import { fixedSettings } from '../../../../src/app/agent/tokens.js';
import type { RawConfig } from '../../../../src/domain/cluster/config/config.js';
import type { CallbackRunner } from '../../../../src/ports/callbacks.js';
import type { Fencer } from '../../../../src/ports/fencer.js';
import type { Logger } from '../../../../src/ports/logger.js';

/** Optional settings of singleNodePrimary: the bootstrap dynamic config (default ttl 30, loop_wait 10), the fencer's margin (5), the logger, a fencer (default none), the callback runner (default none), the clock. */
export interface SingleNodeOptions {
  readonly bootstrapDcs?: RawConfig;
  readonly safetyMargin?: number;
  readonly logger?: Logger;
  readonly fencer?: Fencer;
  readonly callbacks?: CallbackRunner;
  /** The agent's clock (default a new FakeClock). */
  readonly clock?: FakeClock;
}

/** One agent (node1, loop_wait 10 unless told) over an in-memory DCS (its store returned too) and a fake database, ticked until it runs as primary; the loop is not started. */
export async function singleNodePrimary(snapshotRefreshMs: number, opts: SingleNodeOptions = {}): Promise<{ clock: FakeClock; db: FakeDatabase; loop: HaLoop; store: InMemoryClusterStore }> {
  const clock = opts.clock ?? new FakeClock();
  const store = new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'node1' });
  const db = new FakeDatabase({ name: 'node1', connUrl: 'postgres://10.0.0.1:5432/postgres', clock });
  const loop = new HaLoop(
    store,
    db,
    clock,
    new FakeWatchdog(),
    opts.logger ?? new NullLogger(),
    { fetchStatus: async () => null, postFailsafe: async () => false, fetchEvents: async () => [] },
    fixedSettings({
      node: { scope: 'demo', name: 'node1', apiUrl: 'http://10.0.0.1:8008', connUrl: 'postgres://10.0.0.1:5432/postgres', tags: {}, watchdogMode: 'off', svcVersion: '0.1.0' },
      local: { bootstrapDcs: opts.bootstrapDcs ?? { ttl: 30, loop_wait: 10 }, parameters: {}, watchdogSafetyMargin: opts.safetyMargin ?? 5 },
    }),
    { snapshotRefreshMs },
    undefined,
    opts.fencer,
    undefined,
    opts.callbacks,
  );
  for (let i = 0; i < 5 && loop.snapshot().status.role !== 'primary'; i++) {
    await loop.tickOnce();
    await loop.jobDone();
  }
  return { clock, db, loop, store };
}
