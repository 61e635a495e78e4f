import { expect } from 'chai';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { defaultFencerSocket, ensurePrivateSocketDir, foreignSocketProblem, privateRuntimeDir } from '../../../../src/adapters/fencer/fencer-socket-path.js';

describe('the fencer socket: a private folder, and only sockets of this user', () => {
  it('the default socket lives in the agent user\'s private folder, which is created 0700', () => {
    const path = defaultFencerSocket('demo', 'node1', '/var/lib/pg/data');
    expect(dirname(path)).to.equal(privateRuntimeDir());
    ensurePrivateSocketDir(path);
    expect(() => ensurePrivateSocketDir(path), 'again').not.to.throw();
  });

  it('a socket path the configuration names is not checked for its folder', () => {
    expect(() => ensurePrivateSocketDir('/some/where/fencer.sock')).not.to.throw();
  });

  it('refuses a file that is not a socket in the socket\'s place; a missing one is fine; a socket of this user is trusted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-socktest-'));
    try {
      expect(foreignSocketProblem(join(dir, 'none.sock'))).to.equal(null);
      writeFileSync(join(dir, 'file.sock'), '');
      expect(foreignSocketProblem(join(dir, 'file.sock'))).to.match(/is not a socket/);
      symlinkSync('/etc/passwd', join(dir, 'link.sock'));
      expect(foreignSocketProblem(join(dir, 'link.sock'))).to.match(/is not a socket/);
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(join(dir, 'real.sock'), resolve));
      try {
        expect(foreignSocketProblem(join(dir, 'real.sock'))).to.equal(null);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a private folder open to others, or a link in its place, is refused', () => {
    const base = mkdtempSync(join(tmpdir(), 'warden-privtest-'));
    try {
      const dir = join(base, 'warden-0');
      mkdirSync(dir, { mode: 0o700 });
      chmodSync(dir, 0o777);
      expect(() => ensurePrivateSocketDir(join(dir, 'x.sock'), dir)).to.throw(/open to other users/);
      const link = join(base, 'warden-link');
      symlinkSync(dir, link);
      expect(() => ensurePrivateSocketDir(join(link, 'x.sock'), link)).to.throw(/is not a directory/);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
