import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BuildInfo } from '../../domain/collectors/self-metrics.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** Package root: same depth from src/app/exporter and dist/app/exporter. */
const ROOT = resolve(HERE, '../../..');
/** Written next to the compiled code by `writeBuildInfo` at build time. */
export const BUILD_INFO_FILE = join(HERE, 'build-info.json');

function packageVersion(root: string): string {
  try {
    return String((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    return 'unknown';
  }
}

/** Branch and revision read straight from .git (no git process): HEAD, then the ref file or packed-refs. */
export function gitFromFiles(root: string): { branch: string; revision: string } {
  const unknown = { branch: 'unknown', revision: 'unknown' };
  const gitDir = resolveGitDir(root);
  if (!gitDir) return unknown;
  try {
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref:')) return { branch: 'HEAD', revision: head };
    const ref = head.slice(4).trim();
    const branch = ref.replace(/^refs\/heads\//, '');
    const commonDir = existsSync(join(gitDir, 'commondir')) ? resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim()) : gitDir;
    for (const dir of [gitDir, commonDir]) {
      const refFile = join(dir, ref);
      if (existsSync(refFile)) return { branch, revision: readFileSync(refFile, 'utf8').trim() };
    }
    const packed = existsSync(join(commonDir, 'packed-refs')) ? readFileSync(join(commonDir, 'packed-refs'), 'utf8') : '';
    const line = packed.split('\n').find((l) => l.endsWith(` ${ref}`));
    return { branch, revision: line ? line.split(' ')[0]! : 'unknown' };
  } catch {
    return unknown;
  }
}

function resolveGitDir(root: string): string | null {
  const dotGit = join(root, '.git');
  if (!existsSync(dotGit)) return null;
  try {
    const text = readFileSync(dotGit, 'utf8');
    return text.startsWith('gitdir:') ? resolve(root, text.slice(7).trim()) : null;
  } catch {
    return dotGit;
  }
}

/**
 * The exporter's build info, computed once per process: the build-info.json written at build
 * time when present (a packaged install has no .git), else package.json and the .git files of
 * the checkout, else 'unknown'.
 */
export function readBuildInfo(root: string = ROOT, file: string = BUILD_INFO_FILE): BuildInfo {
  try {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Partial<BuildInfo>;
    if (saved.version && saved.branch && saved.revision) return { version: saved.version, branch: saved.branch, revision: saved.revision };
  } catch {
    // no build-info.json: running from the sources
  }
  return { version: packageVersion(root), ...gitFromFiles(root) };
}

/** Build step: records version, branch and revision (asking git once) next to the compiled exporter. */
export function writeBuildInfo(root: string = ROOT, file: string = BUILD_INFO_FILE): BuildInfo {
  const git = (args: string[]): string | null => {
    try {
      return execFileSync('git', args, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim() || null;
    } catch {
      return null;
    }
  };
  const files = gitFromFiles(root);
  const info: BuildInfo = {
    version: packageVersion(root),
    branch: git(['rev-parse', '--abbrev-ref', 'HEAD']) ?? files.branch,
    revision: git(['rev-parse', 'HEAD']) ?? files.revision,
  };
  writeFileSync(file, `${JSON.stringify(info, null, 2)}\n`);
  return info;
}
