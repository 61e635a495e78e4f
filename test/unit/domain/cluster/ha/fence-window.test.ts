import { expect } from 'chai';
import { failsafeWindowProblem, fenceWindowSeconds, safetyMarginProblem } from '../../../../../src/domain/cluster/ha/fence-window.js';

describe('the fencer\'s window', () => {
  it('is ttl - safety_margin, at least a second', () => {
    expect(fenceWindowSeconds(30, 5)).to.equal(25);
    expect(fenceWindowSeconds(20, 20)).to.equal(1);
    expect(fenceWindowSeconds(20, 30)).to.equal(1);
  });

  it('must be longer than loop_wait: a healthy primary renews once per loop', () => {
    expect(safetyMarginProblem(30, 10, 5)).to.equal(null);
    expect(safetyMarginProblem(30, 10, 19)).to.equal(null);
    expect(safetyMarginProblem(30, 10, 20)).to.match(/^expected less than ttl - loop_wait \(30 - 10 = 20 s\), got 20: /);
    expect(safetyMarginProblem(20, 15, 5)).to.match(/^expected less than ttl - loop_wait \(20 - 15 = 5 s\), got 5: .*lower watchdog.safety_margin or raise ttl$/);
  });

  it('in failsafe mode, must be longer than a failsafe round: loop_wait and a retry_timeout wait on an etcd that does not answer', () => {
    expect(failsafeWindowProblem(20, 2, 5, 5)).to.equal(null);
    expect(failsafeWindowProblem(30, 10, 10, 5), 'the defaults').to.equal(null);
    expect(failsafeWindowProblem(30, 10, 15, 5)).to.match(/\(10 \+ 15 = 25 s, and the members' answers\), and the fencer stops PostgreSQL ttl - safety_margin \(30 - 5 = 25 s\) after the last one: .*raise ttl/);
  });
});
