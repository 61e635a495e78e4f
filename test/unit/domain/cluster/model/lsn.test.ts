import { expect } from 'chai';
import { formatLsn, parseLsn } from '../../../../../src/domain/cluster/model/lsn.js';

describe('domain/cluster/lsn', () => {
  const cases: [number, string][] = [
    [0, '0/0'],
    [0x4000060, '0/4000060'],
    [2 ** 32, '1/0'],
    [0x1_2345_6789 + 0xab * 2 ** 32, 'AC/23456789'],
    [Number.MAX_SAFE_INTEGER, '1FFFFF/FFFFFFFF'], // exact up to 2^53 bytes (8 PiB of WAL)
  ];
  for (const [pos, text] of cases) {
    it(`formats ${pos} as ${text} and parses it back`, () => {
      expect(formatLsn(pos)).to.equal(text);
      expect(parseLsn(text)).to.equal(pos);
    });
  }

  it('parses lowercase hex', () => {
    expect(parseLsn('0/4a')).to.equal(0x4a);
  });

  for (const bad of ['', '0', '0/', '/1', 'G/0', '0/123456789', '1/2/3', ' 0/1']) {
    it(`refuses ${JSON.stringify(bad)}`, () => {
      expect(parseLsn(bad)).to.equal(undefined);
    });
  }
});
