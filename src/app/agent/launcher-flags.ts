import { readFileSync } from 'node:fs';

/**
 * The node flags on a launcher's shebang line (`#!/usr/bin/env -S node <flags>`): the agent
 * starts its fencer as `node <launcher>`, which would skip them, so it passes them itself and
 * the fencer runs as `warden-fencer` run directly would. None when the file cannot be read.
 */
export function launcherNodeFlags(launcher: string): string[] {
  let first: string;
  try {
    first = readFileSync(launcher, 'utf8').split('\n', 1)[0] ?? '';
  } catch {
    return [];
  }
  if (!first.startsWith('#!')) return [];
  return first.split(/\s+/).filter((t) => /^--[a-z0-9-]+(=\S+)?$/.test(t));
}
