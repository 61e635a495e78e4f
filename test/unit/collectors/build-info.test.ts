import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitFromFiles, readBuildInfo, writeBuildInfo } from '../../../src/app/exporter/build-info.js';

describe('exporter build info', () => {
  const root = mkdtempSync(join(tmpdir(), 'warden-build-'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ version: '9.8.7' }));
  after(() => rmSync(root, { recursive: true, force: true }));

  it("falls back to 'unknown' outside a git checkout", () => {
    expect(readBuildInfo(root, join(root, 'none.json'))).to.deep.equal({ version: '9.8.7', branch: 'unknown', revision: 'unknown' });
  });

  it('reads branch and revision from .git files (loose ref, packed ref, detached HEAD) without running git', () => {
    const git = join(root, '.git');
    mkdirSync(join(git, 'refs', 'heads'), { recursive: true });
    writeFileSync(join(git, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(git, 'refs', 'heads', 'main'), 'a'.repeat(40) + '\n');
    expect(gitFromFiles(root)).to.deep.equal({ branch: 'main', revision: 'a'.repeat(40) });
    writeFileSync(join(git, 'HEAD'), 'ref: refs/heads/feature/x\n');
    writeFileSync(join(git, 'packed-refs'), `# pack-refs\n${'b'.repeat(40)} refs/heads/feature/x\n`);
    expect(gitFromFiles(root)).to.deep.equal({ branch: 'feature/x', revision: 'b'.repeat(40) });
    writeFileSync(join(git, 'HEAD'), 'c'.repeat(40) + '\n');
    expect(gitFromFiles(root)).to.deep.equal({ branch: 'HEAD', revision: 'c'.repeat(40) });
  });

  it('prefers the build-info.json written at build time', () => {
    const file = join(root, 'build-info.json');
    const written = writeBuildInfo(root, file);
    expect(written.version).to.equal('9.8.7');
    expect(JSON.parse(readFileSync(file, 'utf8'))).to.deep.equal(written);
    writeFileSync(file, JSON.stringify({ version: '1.0.0', branch: 'release', revision: 'd'.repeat(40) }));
    expect(readBuildInfo(root, file)).to.deep.equal({ version: '1.0.0', branch: 'release', revision: 'd'.repeat(40) });
  });

  it('reads this checkout: the package version and a branch/revision', () => {
    const info = readBuildInfo();
    expect(info.version).to.equal(JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version);
    expect(info.revision).to.match(/^([0-9a-f]{40}|unknown)$/);
  });
});
