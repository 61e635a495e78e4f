import { expect } from 'chai';
import { fenceWindowSeconds, safetyMarginProblem } from '../../../../../src/domain/cluster/ha/fence-window.js';

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
});
