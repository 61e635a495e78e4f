import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFileTail } from '../../../../src/adapters/process/file-tail.js';

describe('readFileTail', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-tail-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads what follows an offset, at most the last `limit` bytes', async () => {
    const file = join(dir, 'log');
    writeFileSync(file, 'one\ntwo\nthree\n');
    expect(await readFileTail(file, 1024)).to.equal('one\ntwo\nthree\n');
    expect(await readFileTail(file, 1024, 4)).to.equal('two\nthree\n');
    expect(await readFileTail(file, 6)).to.equal('three\n');
    expect(await readFileTail(file, 6, 12)).to.equal('e\n');
    expect(await readFileTail(file, 1024, 100)).to.equal('');
  });

  it('is empty for a file that cannot be read', async () => {
    expect(await readFileTail(join(dir, 'missing'), 1024)).to.equal('');
    expect(await readFileTail(dir, 1024)).to.equal('');
  });
});
