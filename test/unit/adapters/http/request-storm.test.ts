import autocannon from 'autocannon';
import { expect } from 'chai';
import type { NodeSnapshot } from '../../../../src/domain/cluster/model/snapshot.js';
import { primaryFacts, snapshot, startApi, FakeControl, type ApiHarness } from './support.js';

/**
 * An agent whose HA loop is stuck inside a database call that never returns (a hung
 * PostgreSQL): the tick started, published nothing since, and will never finish. The API
 * must keep answering from the last published snapshot.
 */
class StuckLoopControl extends FakeControl {
  tickStarted = false;
  tickFinished = false;

  /** One loop run: probes the database, which hangs forever. */
  async tick(): Promise<void> {
    this.tickStarted = true;
    await new Promise<never>(() => {});
    this.tickFinished = true;
  }

  override snapshot(): NodeSnapshot {
    // The last snapshot published before the loop got stuck.
    return this.snap;
  }
}

describe('REST API: request storm while the HA loop is blocked', function () {
  this.timeout(60_000);
  let api: ApiHarness;
  after(() => api?.close());

  it('answers 10,000 health requests over 64 keep-alive connections, none waiting on the loop', async () => {
    const control = new StuckLoopControl(snapshot({ facts: primaryFacts(), leader: true }));
    api = await startApi({ control });
    void control.tick();

    const paths = ['/primary', '/replica', '/health', '/liveness', '/readiness', '/leader', '/read-only', '/node'];
    const result = await autocannon({
      url: api.url,
      connections: 64,
      amount: 10_000,
      pipelining: 1,
      timeout: 5,
      requests: paths.map((path) => ({ method: 'GET', path })),
    });

    const byCode = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]));
    const answered = Object.values(byCode).reduce((a, b) => a + b, 0);
    // A request that waited on the loop would never be answered: the 5 s client timeout would count it.
    expect(result.errors, 'connection errors').to.equal(0);
    expect(result.timeouts, 'timeouts').to.equal(0);
    expect(answered, JSON.stringify(byCode)).to.equal(10_000);
    expect(Object.keys(byCode).sort()).to.deep.equal(['200', '503']);
    expect(control.tickStarted && !control.tickFinished, 'the loop stayed blocked throughout').to.equal(true);
  });
});
