import { expect } from 'chai';
import { ValidationError } from '../../../../../src/domain/errors.js';
import { formatSize, isSize, parseSize } from '../../../../../src/domain/cluster/model/size.js';

function sizeError(text: string): ValidationError {
  try {
    parseSize(text, 'lag');
  } catch (e) {
    expect(e).to.be.instanceOf(ValidationError);
    return e as ValidationError;
  }
  throw new Error(`parseSize(${JSON.stringify(text)}) did not throw`);
}

describe('domain/cluster/size: parseSize', () => {
  const valid: [string, number][] = [
    ['0', 0],
    ['1048576', 1048576],
    ['512B', 512],
    ['16kB', 16 * 1024],
    ['64MB', 64 * 1024 ** 2],
    ['1GB', 1024 ** 3],
    ['2TB', 2 * 1024 ** 4],
    ['1.5MB', 1.5 * 1024 ** 2],
    ['0.3kB', 307], // 307.2 floored
    ['1.5B', 1],
  ];
  for (const [text, bytes] of valid) {
    it(`parses ${JSON.stringify(text)} as ${bytes} bytes`, () => {
      expect(parseSize(text)).to.equal(bytes);
    });
  }

  const invalid = ['abc', '-1', '10 mb', '10mb', '1XB', '', '1e3', 'NaN', '1.5', '.5MB', '1 MB', '16KB', 'MB', ' 1MB', '99999999999TB'];
  for (const text of invalid) {
    it(`refuses ${JSON.stringify(text)} with code invalid_size, quoting the input and listing the units`, () => {
      const e = sizeError(text);
      expect(e.code).to.equal('invalid_size');
      expect(e.message).to.include(JSON.stringify(text));
      expect(e.problems[0]!.path).to.equal('lag');
      if (text !== '99999999999TB') expect(e.message).to.include('B, kB, MB, GB or TB');
    });
  }

  it('refuses a value beyond the safe integer range, saying so', () => {
    expect(sizeError('99999999999TB').message).to.match(/larger than/);
  });

  it('isSize tells valid from invalid without throwing', () => {
    expect(isSize('1MB')).to.equal(true);
    expect(isSize('1mb')).to.equal(false);
  });
});

describe('domain/cluster/size: formatSize', () => {
  const cases: [number, string][] = [
    [0, '0B'],
    [512, '512B'],
    [1024, '1kB'],
    [1536, '1.5kB'],
    [1048576, '1MB'],
    [3 * 1024 ** 3, '3GB'],
    [1024 ** 4, '1TB'],
  ];
  for (const [bytes, text] of cases) {
    it(`formats ${bytes} as ${text}`, () => {
      expect(formatSize(bytes)).to.equal(text);
    });
  }

  it('exact multiples round-trip through parseSize', () => {
    for (const bytes of [0, 1, 1024, 1536, 1048576, 5 * 1024 ** 3]) expect(parseSize(formatSize(bytes))).to.equal(bytes);
  });
});
