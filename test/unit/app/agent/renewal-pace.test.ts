import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { RenewalPace } from '../../../../src/app/agent/renewal-pace.js';
import { RepeatedFailures } from '../../../../src/app/agent/repeated-failures.js';

describe('RenewalPace: renewals that land near the fencer\'s limit are said once', () => {
  it('warns when a renewal is answered in the last third of ttl - safety_margin after the previous one was sent, and says when they are in time again', () => {
    const clock = new FakeClock();
    const logger = new MemoryLogger();
    const pace = new RenewalPace(new RepeatedFailures(logger, clock));
    // ttl 20, safety_margin 5: the fencer's window is 15 s, late past 10 s.
    pace.acquired(0);
    pace.renewed(6_000, 8_000, 20, 5);
    expect(logger.messages('warn')).to.deep.equal([]);
    pace.renewed(12_000, 18_500, 20, 5);
    pace.renewed(21_000, 24_500, 20, 5);
    expect(logger.messages('warn')).to.have.length(1);
    expect(logger.messages('warn')[0]).to.match(/^the leader lock is renewed late/);
    expect(logger.lines.find((l) => l.level === 'warn')!.fields).to.include({ since_previous_renewal_s: 12.5, renewal_round_trip_s: 6.5 });
    pace.renewed(27_000, 27_100, 20, 5);
    expect(logger.messages('info')).to.deep.equal(['the leader lock is renewed in time again (it failed 2 times in a row over 0 s)']);
  });
});
