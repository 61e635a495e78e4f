import { expect } from 'chai';
import { ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ShellLauncher } from '../../../../src/adapters/process/shell-launcher.js';

/** Alive: signal 0 reaches it and it is no zombie (an orphan may wait long for a reaper in a container). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** The pid of the launcher shell `l` runs, read from its private state for the fault test. */
function launcherPid(l: ShellLauncher): number {
  const pid = (l as unknown as { current: { child: ChildProcess } | null }).current?.child.pid;
  if (pid === undefined) throw new Error('no launcher running');
  return pid;
}

describe('adapters/process: ShellLauncher starts commands through one shell, never by forking the agent', function () {
  this.timeout(15_000);
  let launcher: ShellLauncher;
  beforeEach(() => {
    launcher = new ShellLauncher();
  });

  it('passes arguments verbatim (quotes, newlines, spaces, $), the extra environment, and runs from /', async () => {
    const args = ["it's", 'two\nlines', ' spaced ', '$HOME `id` "q"', ''];
    const r = await launcher.launch('/bin/sh', ['-c', 'for a in "$@"; do printf "<%s>" "$a"; done; echo; echo "$PGPASSWORD"; pwd; echo oops >&2', 'sh', ...args], { env: { PGPASSWORD: "s3'cr\"et" } }).done;
    expect(r).to.include({ code: 0, signal: null, launchError: null, stderr: 'oops\n' });
    expect(r.stdout).to.equal(`${args.map((a) => `<${a}>`).join('')}\ns3'cr"et\n/\n`);
  });

  it('does not pass the agent’s WARDEN_* variables (they may carry passwords)', async () => {
    process.env['WARDEN_TEST_SECRET'] = 'hidden';
    try {
      const fresh = new ShellLauncher();
      const r = await fresh.launch('/bin/sh', ['-c', 'echo "[${WARDEN_TEST_SECRET:-}]"']).done;
      expect(r.stdout).to.equal('[]\n');
    } finally {
      delete process.env['WARDEN_TEST_SECRET'];
    }
  });

  it('tells an exit code, a signal, and a command that does not exist', async () => {
    expect(await launcher.launch('/bin/sh', ['-c', 'exit 3']).done).to.include({ code: 3, signal: null });
    expect(await launcher.launch('/bin/sh', ['-c', 'kill -KILL $$']).done).to.include({ code: null, signal: 'SIGKILL' });
    const missing = await launcher.launch('/nonexistent/tool', ['x']).done;
    expect(missing.code).to.equal(127);
    expect(missing.stderr).to.match(/nonexistent\/tool/);
  });

  it('finds its own tools whatever PATH the agent has, and passes that PATH on', async () => {
    const saved = process.env['PATH'];
    process.env['PATH'] = '/nonexistent';
    try {
      const fresh = new ShellLauncher();
      const r = await fresh.launch('/bin/sh', ['-c', 'echo "$PATH"; read -r stat < /proc/$$/stat; echo "$stat" | { read -r pid _ _ _ pgrp _; [ "$pid" = "$pgrp" ] && echo own-group; }'], {
        ownProcessGroup: true,
        drained: { keepBytes: 4096, graceMs: 150 },
      }).done;
      expect(r).to.include({ code: 0, stdout: '/nonexistent\nown-group\n' });
    } finally {
      process.env['PATH'] = saved;
    }
  });

  it('gives the command SIGINT and SIGQUIT back (a shell starts background commands with them ignored)', async () => {
    const r = await launcher.launch('/bin/sh', ['-c', 'grep SigIgn /proc/self/status']).done;
    const mask = BigInt(`0x${r.stdout.split(/\s+/)[1]}`);
    expect(mask & 0b110n, 'SIGINT (2) and SIGQUIT (3) not ignored').to.equal(0n);
  });

  it('delivers a kill asked for before the command reported its pid, and none once it exited', async () => {
    const c = launcher.launch('/bin/sleep', ['30']);
    c.kill('SIGTERM');
    const t0 = Date.now();
    expect(await c.done).to.include({ code: null, signal: 'SIGTERM' });
    expect(Date.now() - t0).to.be.below(3000);
    expect(c.hasExited()).to.equal(true);
    c.kill('SIGKILL'); // nothing to signal: its pid may be someone else's now
  });

  it('runs commands side by side, each with its own output, through one shell started once', async () => {
    const proto = ChildProcess.prototype as unknown as { spawn: (o: unknown) => unknown };
    const original = proto.spawn;
    let forks = 0;
    proto.spawn = function counted(this: unknown, o: unknown) {
      forks++;
      return original.call(this, o);
    };
    try {
      const all = await Promise.all(Array.from({ length: 30 }, (_, i) => launcher.launch('/bin/sh', ['-c', `sleep 0.0$((${i} % 5)); echo ${i}; echo e${i} >&2`]).done));
      expect(all.map((r) => r.stdout)).to.deep.equal(Array.from({ length: 30 }, (_, i) => `${i}\n`));
      expect(all.map((r) => r.stderr)).to.deep.equal(Array.from({ length: 30 }, (_, i) => `e${i}\n`));
      expect(forks, 'the agent started the launcher and nothing else').to.equal(1);
    } finally {
      proto.spawn = original;
    }
  });

  it('in a process group of its own when asked, so a kill of the group reaches its children', async () => {
    const c = launcher.launch('/bin/sh', ['-c', 'sleep 30 & echo $!; ps -o pgid= -p $$; echo $$; wait'], { ownProcessGroup: true });
    await sleep(300);
    c.kill('SIGTERM');
    const r = await c.done;
    expect(r.signal).to.equal('SIGTERM');
    const [child, pgid, pid] = r.stdout.trim().split(/\s+/).map(Number);
    expect(pgid, 'its own group').to.equal(pid);
    await sleep(100);
    expect(alive(child!), 'the background child shared the kill').to.equal(false);
  });

  it('a command already running when the launcher shell dies still reports its end; the next one gets a new shell', async () => {
    await launcher.launch('/bin/true', []).done;
    const first = launcherPid(launcher);
    const running = launcher.launch('/bin/sh', ['-c', 'sleep 0.5; echo survived']);
    await sleep(100);
    process.kill(first, 'SIGKILL');
    expect(await running.done).to.include({ code: 0, stdout: 'survived\n', launchError: null });
    const next = await launcher.launch('/bin/echo', ['again']).done;
    expect(next).to.include({ code: 0, stdout: 'again\n' });
    expect(launcherPid(launcher)).to.not.equal(first);
  });

  it('a launcher shell that is stuck (frozen) is killed when a command it never started is killed; the next command gets a new shell', async () => {
    await launcher.launch('/bin/true', []).done;
    const stuck = launcherPid(launcher);
    process.kill(stuck, 'SIGSTOP');
    const c = launcher.launch('/bin/echo', ['never']);
    await sleep(100);
    c.kill('SIGTERM');
    const t0 = Date.now();
    const r = await c.done;
    expect(Date.now() - t0).to.be.below(7000);
    expect(r.launchError?.message).to.match(/did not start the command/);
    expect(r.stdout, 'it never ran').to.equal('');
    await sleep(100);
    expect(alive(stuck), 'the stuck shell is gone').to.equal(false);
    expect(await launcher.launch('/bin/echo', ['fresh']).done).to.include({ code: 0, stdout: 'fresh\n' });
  });

  it('a launcher shell that cannot start fails its commands as never handed over (they may be started another way)', async () => {
    const r = await new ShellLauncher('/nonexistent/sh').launch('/bin/echo', ['x']).done;
    expect(r).to.include({ handedOver: false, code: null, stdout: '' });
    expect(r.launchError?.message).to.match(/ENOENT/);
  });

  it('keeps only the tail of a large output', async () => {
    const r = await launcher.launch('/bin/sh', ['-c', 'head -c 100000 /dev/zero | tr "\\0" a; echo END'], { maxOutputBytes: 10 }).done;
    expect(r.stdout).to.equal('aaaaaaEND\n');
  });

  it('drained: keeps the first bytes, ends with the command, and reads what a child it left writes later into nothing', async () => {
    const dirOf = (l: ShellLauncher) => (l as unknown as { dir: string }).dir;
    const status = join(mkdtempSync(join(tmpdir(), 'warden-launcher-test-')), 'status');
    const c = launcher.launch('/bin/sh', ['-c', `echo out; echo err >&2; (sleep 0.3; head -c 3000000 /dev/zero; echo "wrote $?" > ${status}) & exit 5`], {
      ownProcessGroup: true,
      drained: { keepBytes: 64, graceMs: 150 },
    });
    const t0 = Date.now();
    const r = await c.done;
    expect(Date.now() - t0, 'not held by the child that keeps the output open').to.be.below(1000);
    expect(r.code).to.equal(5);
    expect(r.stdout).to.equal('out\nerr\n');
    await sleep(800);
    const { readdirSync, statSync } = await import('node:fs');
    const dir = dirOf(launcher);
    const sizes = readdirSync(dir).filter((f) => f !== 'launcher.sh').map((f) => statSync(join(dir, f)).size);
    expect(Math.max(0, ...sizes), 'nothing of the later output is kept on disk').to.be.below(100);
    expect(readFileSync(status, 'utf8'), 'the child wrote 3 MB after its script ended, to its end').to.equal('wrote 0\n');
    rmSync(dirname(status), { recursive: true, force: true });
  });

  it("does not keep the agent's process from exiting once its commands ended", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warden-launcher-test-'));
    try {
      const main = join(dir, 'main.mts');
      const source = resolve('src/adapters/process/shell-launcher.ts');
      writeFileSync(main, `import { ShellLauncher } from ${JSON.stringify(source)};\nconst r = await new ShellLauncher().launch('/bin/echo', ['hi']).done;\nconsole.log(r.code, r.stdout.trim());\n`);
      const t0 = Date.now();
      const stdout = await new Promise<string>((done, fail) => execFile(process.execPath, ['--import', 'tsx', main], { timeout: 8000 }, (error, out) => (error ? fail(error) : done(out))));
      expect(stdout.trim()).to.equal('0 hi');
      expect(Date.now() - t0).to.be.below(6000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
