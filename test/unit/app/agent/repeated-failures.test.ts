import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { RepeatedFailures } from '../../../../src/app/agent/repeated-failures.js';

describe('RepeatedFailures: a failure that repeats says why once', () => {
  it('warns the first time, at the 4th and 16th time, when the error changes, and says once when it ends', async () => {
    const clock = new FakeClock();
    const logger = new MemoryLogger();
    const failures = new RepeatedFailures(logger, clock);
    for (let i = 0; i < 20; i++) {
      failures.failed('DCS is not accessible', i < 18 ? 'connection refused' : 'timed out');
      await clock.advance(10_000);
    }
    failures.succeeded('DCS is not accessible', 'DCS is accessible again');
    failures.succeeded('DCS is not accessible', 'DCS is accessible again');
    expect(logger.messages('warn')).to.deep.equal([
      'DCS is not accessible; said again at the 4th time in a row or when the error changes',
      'DCS is not accessible (4 times in a row over 30 s); said again at the 16th time in a row or when the error changes',
      'DCS is not accessible (16 times in a row over 150 s); said again at the 64th time in a row or when the error changes',
      'DCS is not accessible (19 times in a row over 180 s); said again at the 64th time in a row or when the error changes',
    ]);
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => l.fields['error'])).to.deep.equal(['connection refused', 'connection refused', 'connection refused', 'timed out']);
    expect(logger.messages('info')).to.deep.equal(['DCS is accessible again (it failed 20 times in a row over 200 s)']);
    expect(logger.messages('debug')).to.have.length(16);
  });
});
