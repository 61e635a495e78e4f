import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, fstatSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueuedLineWriter } from '../../../../src/adapters/logger/queued-line-writer.js';

const notice = (count: number, reason: string) => `LOST ${count} (${reason})\n`;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Reads what a FIFO holds now (its reader end is non-blocking). */
function readAvailable(fd: number): string {
  const buf = Buffer.alloc(65536);
  let text = '';
  for (;;) {
    try {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) return text;
      text += buf.toString('utf8', 0, n);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') return text;
      throw e;
    }
  }
}

/** Reads from the FIFO, turn by turn, until `writer` has nothing left to write. */
async function drainThrough(fd: number, writer: QueuedLineWriter): Promise<string> {
  let text = '';
  let done = false;
  void writer.drained(10_000).then(() => (done = true));
  while (!done) {
    text += readAvailable(fd);
    await new Promise((r) => setTimeout(r, 2));
  }
  return text + readAvailable(fd);
}

describe('QueuedLineWriter', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-lines-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes every line, in order, and drained() resolves once they are on file', async () => {
    const fd = openSync(join(dir, 'log'), 'a');
    const w = new QueuedLineWriter(fd, { notice });
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i} ${'x'.repeat(i % 200)}\n`);
    for (const l of lines) w.write(l);
    await w.drained();
    expect(readFileSync(join(dir, 'log'), 'utf8')).to.equal(lines.join(''));
    closeSync(fd);
  });

  it('a reader that stops reading holds neither the caller nor the event loop; lines past the bound become one notice in their place', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // Read-write: the open does not wait for a reader, and writes block once the pipe is full, as they do into a stalled journald.
    const writeEnd = openSync(fifo, constants.O_RDWR);
    const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const w = new QueuedLineWriter(writeEnd, { notice, maxQueued: 20_000 });
      const lines = Array.from({ length: 4000 }, (_, i) => `${String(i).padStart(5, '0')} ${'y'.repeat(94)}\n`);
      const started = performance.now();
      for (const l of lines) {
        w.write(l);
        if (Number(l.slice(0, 5)) % 100 === 0) await turn();
      }
      // 400 kB against a 64 kB pipe and a 20 kB queue: a synchronous writer would be stuck here for good.
      expect(performance.now() - started).to.be.below(2000);
      const text = await drainThrough(readEnd, w);
      w.write('after the gap\n');
      const got = (text + (await drainThrough(readEnd, w))).split('\n').filter(Boolean);
      // Each line in order; each notice stands exactly where its lost lines were, counting them.
      let expected = 0;
      let notices = 0;
      for (const l of got.slice(0, -1)) {
        const lost = /^LOST (\d+) \(the log is written more slowly than lines come\)$/.exec(l);
        if (lost) {
          notices += 1;
          expected += Number(lost[1]);
        } else {
          expect(Number(l.slice(0, 5)), l).to.equal(expected);
          expected += 1;
        }
      }
      expect(expected).to.equal(lines.length);
      expect(notices).to.be.at.least(1);
      expect(got[got.length - 1]).to.equal('after the gap');
    } finally {
      closeSync(writeEnd);
      closeSync(readEnd);
    }
  });

  it('a descriptor that answers EAGAIN (non-blocking, full) is tried again later: nothing is lost within the bound', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const writeEnd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const w = new QueuedLineWriter(writeEnd, { notice });
      const lines = Array.from({ length: 2000 }, (_, i) => `${String(i).padStart(5, '0')} ${'z'.repeat(94)}\n`);
      for (const l of lines) w.write(l);
      await new Promise((r) => setTimeout(r, 50));
      const text = await drainThrough(readEnd, w);
      expect(text).to.equal(lines.join(''));
    } finally {
      closeSync(writeEnd);
      closeSync(readEnd);
    }
  });

  it('replaceFd: later lines go to the new descriptor, and the old one is closed once its write is done', async () => {
    const first = openSync(join(dir, 'a'), 'a');
    const second = openSync(join(dir, 'b'), 'a');
    const w = new QueuedLineWriter(first, { notice });
    w.write('one\n');
    w.replaceFd(second);
    w.write('two\n');
    await w.drained();
    expect(readFileSync(join(dir, 'a'), 'utf8')).to.equal('one\n');
    expect(readFileSync(join(dir, 'b'), 'utf8')).to.equal('two\n');
    expect(() => fstatSync(first)).to.throw(/EBADF/);
    closeSync(second);
  });

  it('a failed write becomes a notice of its lines, carried by the next write', async () => {
    writeFileOf(join(dir, 'ro'));
    const readOnly = openSync(join(dir, 'ro'), 'r');
    const good = openSync(join(dir, 'good'), 'a');
    const w = new QueuedLineWriter(readOnly, { notice });
    w.write('lost 1\n');
    w.write('lost 2\n');
    await w.drained();
    w.replaceFd(good);
    w.write('next\n');
    await w.drained();
    const text = readFileSync(join(dir, 'good'), 'utf8');
    expect(text).to.match(/^LOST [12] \(writing the log failed: EBADF\)\n(LOST 1 \(writing the log failed: EBADF\)\n)?next\n$/);
    expect(() => fstatSync(readOnly)).to.throw(/EBADF/);
    closeSync(good);
  });

  it('flushSync writes what waits behind a write under way, and gives up behind one stuck for over a second', async () => {
    const fd = openSync(join(dir, 'log'), 'a');
    let now = 0;
    const w = new QueuedLineWriter(fd, { notice, now: () => now });
    w.write('in flight\n');
    w.write('waiting\n');
    w.flushSync();
    await w.drained();
    expect(readFileSync(join(dir, 'log'), 'utf8').split('\n').filter(Boolean).sort()).to.deep.equal(['in flight', 'waiting']);
    closeSync(fd);

    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const writeEnd = openSync(fifo, constants.O_RDWR);
    const readEnd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const stuck = new QueuedLineWriter(writeEnd, { notice, now: () => now });
      stuck.write('x'.repeat(100_000) + '\n');
      stuck.write('behind it\n');
      now = 1500;
      const before = performance.now();
      stuck.flushSync();
      expect(performance.now() - before).to.be.below(100);
      await drainThrough(readEnd, stuck);
    } finally {
      closeSync(writeEnd);
      closeSync(readEnd);
    }
  });
});

function writeFileOf(path: string): void {
  closeSync(openSync(path, 'w'));
}
