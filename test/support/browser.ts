import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (scripts/setup.sh installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Launches headless Chromium with a new empty profile and without any background traffic
 * (this machine refuses outside connections; Chromium's own would fail and slow it down).
 * `close()` also removes the profile.
 */
export async function launchBrowser(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'warden-chromium-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    // playwright gives every launch a new empty --user-data-dir of its own (it refuses one passed in args).
    env: { ...process.env, TMPDIR: profile },
  });
  return {
    browser,
    close: async () => {
      await browser.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
