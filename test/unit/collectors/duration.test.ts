import { expect } from 'chai';
import { formatDuration, parseDurationMs, requireDurationMs } from '../../../src/domain/collectors/duration.js';
import { ValidationError } from '../../../src/domain/errors.js';

describe('collectors: durations', () => {
  it('parses 10s, 100ms, 1m, 1h, decimals and bare numbers of seconds', () => {
    expect(parseDurationMs('10s')).to.equal(10_000);
    expect(parseDurationMs('100ms')).to.equal(100);
    expect(parseDurationMs('1m')).to.equal(60_000);
    expect(parseDurationMs('1h')).to.equal(3_600_000);
    expect(parseDurationMs('1.5s')).to.equal(1500);
    expect(parseDurationMs(10)).to.equal(10_000);
    expect(parseDurationMs(0.25)).to.equal(250);
    expect(parseDurationMs('5')).to.equal(5000);
    expect(parseDurationMs(0)).to.equal(0);
  });

  it('rejects negative, unknown units, empty and non-scalar values', () => {
    for (const bad of ['-1s', '10x', '', 's', '1 0s', null, undefined, {}, [], -2, NaN, Infinity]) {
      expect(parseDurationMs(bad), JSON.stringify(bad)).to.equal(null);
    }
  });

  it('requireDurationMs names the field in a typed error', () => {
    try {
      requireDurationMs('soon', 'db_x.ttl');
      expect.fail('should throw');
    } catch (e) {
      expect(e).to.be.instanceOf(ValidationError);
      expect((e as ValidationError).code).to.equal('invalid_duration');
      expect((e as ValidationError).message).to.contain('db_x.ttl').and.contain('"soon"');
    }
  });

  it('formats durations the way they are written', () => {
    expect(formatDuration(0)).to.equal('0s');
    expect(formatDuration(100)).to.equal('100ms');
    expect(formatDuration(10_000)).to.equal('10s');
    expect(formatDuration(60_000)).to.equal('1m');
    expect(formatDuration(1500)).to.equal('1.5s');
    expect(formatDuration(7_200_000)).to.equal('2h');
  });
});
