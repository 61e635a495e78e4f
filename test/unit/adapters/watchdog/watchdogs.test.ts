import { expect } from 'chai';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { FakeWatchdog } from '../../../../src/adapters/watchdog/fake-watchdog.js';
import { LinuxWatchdog } from '../../../../src/adapters/watchdog/linux-watchdog.js';
import { NoopWatchdog } from '../../../../src/adapters/watchdog/noop-watchdog.js';

describe('FakeWatchdog', () => {
  it('arms, counts kicks and disarms', async () => {
    const w = new FakeWatchdog();
    expect(await w.isUsable()).to.equal(true);
    expect(await w.keepalive(), 'kick before activate').to.equal(false);
    expect(await w.activate(25)).to.equal(true);
    expect(w.isActive).to.equal(true);
    expect(w.timeoutSeconds).to.equal(25);
    expect(await w.keepalive()).to.equal(true);
    expect(w.keepalives).to.equal(1);
    await w.disable();
    expect(w.isActive).to.equal(false);
  });

  it('an unusable device refuses activation', async () => {
    const w = new FakeWatchdog({ usable: false });
    expect(await w.isUsable()).to.equal(false);
    expect(await w.activate(25)).to.equal(false);
    expect(w.isActive).to.equal(false);
  });

  it('failing kicks return false', async () => {
    const w = new FakeWatchdog();
    await w.activate(25);
    w.setFailing(true);
    expect(await w.keepalive()).to.equal(false);
    w.setFailing(false);
    expect(await w.keepalive()).to.equal(true);
  });

  it('with a clock, tells when the countdown ran out', async () => {
    const clock = new FakeClock(0);
    const w = new FakeWatchdog({ clock });
    await w.activate(10);
    await clock.advance(9000);
    await w.keepalive();
    await clock.advance(9999);
    expect(w.hasFired).to.equal(false);
    await clock.advance(1);
    expect(w.hasFired).to.equal(true);
  });
});

describe('NoopWatchdog', () => {
  it('accepts everything and arms nothing', async () => {
    const w = new NoopWatchdog();
    expect(await w.activate(10)).to.equal(true);
    expect(await w.keepalive()).to.equal(true);
    expect(w.isActive).to.equal(false);
    expect(await w.isUsable()).to.equal(true);
    await w.disable();
  });
});

describe('LinuxWatchdog (against a regular file standing in for the device)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'warden-wd-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a missing device is not usable and does not activate', async () => {
    const w = new LinuxWatchdog({ device: join(dir, 'nope'), sysfsRoot: join(dir, 'sys') });
    expect(await w.isUsable()).to.equal(false);
    expect(await w.activate(10)).to.equal(false);
    expect(w.isActive).to.equal(false);
  });

  it('activate opens and kicks, keepalive writes a byte, disable writes the magic V and closes', async () => {
    const device = join(dir, 'watchdog');
    await writeFile(device, '');
    const w = new LinuxWatchdog({ device, sysfsRoot: join(dir, 'sys') });
    expect(await w.isUsable()).to.equal(true);
    expect(await w.activate(10)).to.equal(true);
    expect(w.isActive).to.equal(true);
    expect(await w.keepalive()).to.equal(true);
    await w.disable();
    expect(w.isActive).to.equal(false);
    expect(await w.keepalive()).to.equal(false);
    expect(await readFile(device, 'latin1')).to.equal('\0\0V');
  });

  it('refuses when sysfs says the device timeout is longer than requested', async () => {
    const device = join(dir, 'watchdog');
    await writeFile(device, '');
    await mkdir(join(dir, 'sys', 'watchdog0'), { recursive: true });
    await writeFile(join(dir, 'sys', 'watchdog0', 'timeout'), '60\n');
    const w = new LinuxWatchdog({ device, sysfsRoot: join(dir, 'sys'), setTimeout: async () => false });
    expect(await w.effectiveTimeoutSeconds()).to.equal(60);
    expect(await w.activate(25)).to.equal(false);
    expect(await readFile(device, 'latin1'), 'never opened').to.equal('');
    expect(await w.activate(60)).to.equal(true);
    await w.disable();
  });

  it('sets the timeout on the device first (wdctl --settimeout), then arms it with that timeout', async () => {
    const device = join(dir, 'watchdog');
    await writeFile(device, '');
    const sysfs = join(dir, 'sys', 'watchdog0', 'timeout');
    await mkdir(join(dir, 'sys', 'watchdog0'), { recursive: true });
    await writeFile(sysfs, '60\n');
    const calls: string[] = [];
    // A stand-in for wdctl: the driver takes the new timeout, as sysfs then shows.
    const w = new LinuxWatchdog({
      device,
      sysfsRoot: join(dir, 'sys'),
      setTimeout: async (dev, seconds) => {
        calls.push(`${dev} ${seconds}`);
        await writeFile(sysfs, `${seconds}\n`);
        return true;
      },
    });
    expect(await w.activate(15)).to.equal(true);
    expect(calls).to.deep.equal([`${device} 15`]);
    expect(await w.effectiveTimeoutSeconds()).to.equal(15);
    await w.disable();
    // Already right: no second call.
    expect(await w.activate(15)).to.equal(true);
    expect(calls).to.have.length(1);
    await w.disable();
  });

  it('the default timeout setter is wdctl, and a device it cannot set (a plain file) falls back to the sysfs check', async () => {
    const device = join(dir, 'watchdog');
    await writeFile(device, '');
    const w = new LinuxWatchdog({ device, sysfsRoot: join(dir, 'sys') });
    expect(await w.activate(15), 'no sysfs entry: the device is trusted').to.equal(true);
    await w.disable();
  });
});
