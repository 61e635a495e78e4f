import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launcherNodeFlags } from '../../../../src/app/agent/launcher-flags.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

describe('launcherNodeFlags: the node flags of a launcher shebang, for the fencer the agent starts', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'warden-launcher-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("reads the fencer launcher's flags from the package", () => {
    expect(launcherNodeFlags(join(repoRoot, 'bin', 'warden-fencer.js'))).to.include('--v8-pool-size=1').and.to.satisfy((f: string[]) => f.some((x) => x.startsWith('--max-semi-space-size=')));
  });

  it("runs the agent with a small young generation and V8's compaction, with flags this node accepts", () => {
    const flags = launcherNodeFlags(join(repoRoot, 'bin', 'warden.js'));
    expect(flags).to.include.members(['--max-semi-space-size=1', '--v8-pool-size=1']);
    // Without compaction a long load fragments the old generation: memory climbs for good.
    expect(flags).not.to.include('--no-compact');
    // env -S node <flags> fails to start the agent at all on a flag node does not know.
    expect(execFileSync(process.execPath, [...flags, '-e', 'process.stdout.write("ok")'], { encoding: 'utf8' })).to.equal('ok');
  });

  it('takes only the --flags of an env -S shebang', () => {
    const f = join(dir, 'l.js');
    writeFileSync(f, '#!/usr/bin/env -S node --max-semi-space-size=1 --v8-pool-size=1\nconsole.log(1)\n');
    expect(launcherNodeFlags(f)).to.deep.equal(['--max-semi-space-size=1', '--v8-pool-size=1']);
  });

  it('none for a plain shebang, no shebang, or a missing file', () => {
    const plain = join(dir, 'p.js');
    writeFileSync(plain, '#!/usr/bin/env node\n');
    const none = join(dir, 'n.js');
    writeFileSync(none, '// --max-semi-space-size=1\n');
    expect(launcherNodeFlags(plain)).to.deep.equal([]);
    expect(launcherNodeFlags(none)).to.deep.equal([]);
    expect(launcherNodeFlags(join(dir, 'missing.js'))).to.deep.equal([]);
  });
});
