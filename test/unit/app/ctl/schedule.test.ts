import { expect } from 'chai';
import { parseScheduledAt } from '../../../../src/app/ctl/schedule.js';
import { CtlError } from '../../../../src/app/ctl/errors.js';

const NOW = Date.UTC(2030, 0, 1, 12);

function refused(value: string): string {
  try {
    parseScheduledAt(value, NOW);
  } catch (e) {
    expect(e).to.be.instanceOf(CtlError);
    return (e as Error).message;
  }
  throw new Error(`${value} was accepted`);
}

describe('wardenctl --scheduled: ISO 8601 only, and days that exist', () => {
  it('takes a timestamp with a zone, or local time without one; "now" or no option is immediate', () => {
    expect(parseScheduledAt('2030-01-31T02:00+01:00', NOW)).to.equal('2030-01-31T01:00:00.000Z');
    expect(parseScheduledAt('2030-01-31 02:00:30Z', NOW)).to.equal('2030-01-31T02:00:30.000Z');
    expect(parseScheduledAt('2030-01-31T02:00:30.250-0530', NOW)).to.equal('2030-01-31T07:30:30.250Z');
    expect(parseScheduledAt('2030-01-31T02:00', NOW)).to.equal(new Date(2030, 0, 31, 2, 0).toISOString());
    expect(parseScheduledAt('now', NOW)).to.equal(null);
    expect(parseScheduledAt(undefined, NOW)).to.equal(null);
  });

  it('refuses a day that does not exist, a date alone, and the spellings that read differently to different people', () => {
    for (const v of ['2030-02-30T02:00', '2030-02-30T02:00Z', '2030-13-01T00:00Z', '2030-01-31T24:00Z', '2030-01-31', '1/2/2030', 'March 3 2030', 'Tue 2030']) {
      expect(refused(v), v).to.match(/cannot parse/);
    }
    expect(refused('2029-12-31T00:00Z')).to.match(/in the past/);
  });

  it('refuses an empty value (a script\'s unset variable) instead of acting at once', () => {
    for (const v of ['', '  ']) expect(refused(v), JSON.stringify(v)).to.match(/--scheduled is empty: give a time .* or "now"/);
  });
});
