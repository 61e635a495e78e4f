import { FakeHookScripts } from '../../src/adapters/callbacks/fake-hook-scripts.js';
import type { FakeClock } from '../../src/adapters/clock/fake-clock.js';
import type { HookName, HookOutcome } from '../../src/ports/hook-scripts.js';
import type { Random } from './random.js';

/**
 * The cluster's post_bootstrap script (fault model v11): each run takes 0-20 s of fake time,
 * the first `failures` runs fail, later ones succeed. It remembers the data (system
 * identifier) each success ran on: a cluster registered with any other data skipped it.
 */
export class PostBootstrapScript {
  /** System identifiers of the data a run succeeded on. */
  readonly finished = new Set<string>();
  /** Runs started, in order. */
  runs = 0;
  private failuresLeft: number;

  constructor(
    private readonly rnd: Random,
    /** The cluster's clock (asked at each run: the cluster is made after its scripts). */
    private readonly clock: () => FakeClock,
    failures: number,
  ) {
    this.failuresLeft = failures;
  }

  /** One run on the data of `systemIdentifier` (read when it starts). */
  async run(systemIdentifier: string | null): Promise<HookOutcome> {
    this.runs++;
    await this.clock().sleep(this.rnd.int(0, 20) * 1000);
    if (this.failuresLeft > 0) {
      this.failuresLeft--;
      return { ran: true, ok: false, why: 'exited with code 1: the roles service did not answer' };
    }
    if (systemIdentifier !== null) this.finished.add(systemIdentifier);
    return { ran: true, ok: true };
  }
}

/** A node's scripts in fault model v11: pre_promote as set (FakeHookScripts), post_bootstrap the cluster's shared script on this node's data. */
export class SimHookScripts extends FakeHookScripts {
  constructor(
    private readonly postBootstrap: PostBootstrapScript,
    private readonly systemIdentifier: () => string | null,
  ) {
    super({ pre_promote: 'succeeds' });
  }

  override async run(name: HookName): Promise<HookOutcome> {
    if (name !== 'post_bootstrap') return super.run(name);
    this.runs.push(name);
    return this.postBootstrap.run(this.systemIdentifier());
  }
}
