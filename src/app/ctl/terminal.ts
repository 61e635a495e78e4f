import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { Writable } from 'node:stream';
import { readBounded } from '../yaml-read.js';
import { CtlError } from './errors.js';

/**
 * Questions on stderr (stdout stays clean for tables and JSON), answers read line by line
 * from stdin, so answers can be piped in. After stdin ends every question gets ''.
 */
export class Prompter {
  private rl: Interface | null = null;
  private readonly lines: string[] = [];
  private readonly waiting: ((line: string) => void)[] = [];
  private ended = false;

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stderr,
  ) {}

  private start(): void {
    if (this.rl) return;
    this.rl = createInterface({ input: this.input, terminal: false });
    this.rl.on('line', (line) => {
      const w = this.waiting.shift();
      if (w) w(line);
      else this.lines.push(line);
    });
    this.rl.on('close', () => {
      this.ended = true;
      for (const w of this.waiting.splice(0)) w('');
    });
  }

  /** Writes the question and resolves with the next line of input ('' after end of input). */
  ask(question: string): Promise<string> {
    this.start();
    this.output.write(question);
    const queued = this.lines.shift();
    const answer = queued !== undefined ? Promise.resolve(queued) : this.ended ? Promise.resolve('') : new Promise<string>((resolve) => this.waiting.push(resolve));
    // A terminal echoes the user's Enter; piped answers do not, so end the prompt line here.
    return (this.input as { isTTY?: boolean }).isTTY ? answer : answer.then((a) => (this.output.write('\n'), a));
  }

  /**
   * Asks for a secret. On a terminal the answer is read without echo; piped input is read as
   * a plain line (nothing is echoed then anyway).
   */
  async askHidden(question: string): Promise<string> {
    const input = this.input as NodeJS.ReadableStream & { isTTY?: boolean };
    if (this.rl || !input.isTTY) return this.ask(question);
    this.output.write(question);
    const muted = new Writable({ write: (_chunk, _enc, done) => done() });
    const rl = createInterface({ input, output: muted, terminal: true });
    try {
      return await new Promise<string>((resolve) => {
        rl.once('line', resolve);
        rl.once('close', () => resolve(''));
      });
    } finally {
      rl.close();
      this.output.write('\n');
    }
  }

  /** Asks a yes/no question; only `y`/`yes` is yes. */
  async confirm(question: string): Promise<boolean> {
    return /^\s*y(es)?\s*$/i.test(await this.ask(`${question} [y/N]: `));
  }

  /** Stops reading stdin, so the process can exit. */
  close(): void {
    this.rl?.close();
  }
}

/** Opens `text` in `$VISUAL`/`$EDITOR` (default vi; run by the shell, so it may carry arguments) and returns the saved file. */
export function editInEditor(text: string, env: NodeJS.ProcessEnv = process.env): string {
  const editor = (env['VISUAL'] || env['EDITOR'] || 'vi').trim();
  const dir = mkdtempSync(join(tmpdir(), 'wardenctl-'));
  const file = join(dir, 'config.yaml');
  try {
    writeFileSync(file, text, { mode: 0o600 });
    const r = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'sh', file], { stdio: 'inherit' });
    if (r.error) throw new CtlError('editor_failed', `cannot run editor ${JSON.stringify(editor)}: ${r.error.message}`);
    if (r.status !== 0) throw new CtlError('editor_failed', `editor ${JSON.stringify(editor)} exited with ${r.status ?? r.signal}; nothing changed`);
    return readFileSync(file, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads a file, or all of stdin for `-`. */
export async function readInput(path: string): Promise<string> {
  // Bounded: SQL or a configuration is far smaller, and /dev/zero or an endless pipe must not fill the memory.
  const tooLarge = () => new CtlError('file_unreadable', `cannot read ${path === '-' ? 'standard input' : path}: it holds more than ${INPUT_MAX_BYTES / 1024 / 1024} MiB`);
  let bytes: Buffer;
  try {
    if (path !== '-') {
      const read = readBounded(path, INPUT_MAX_BYTES);
      if (!read.whole) throw tooLarge();
      bytes = read.bytes;
    } else {
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const c of process.stdin) {
        total += (c as Buffer).length;
        if (total > INPUT_MAX_BYTES) throw tooLarge();
        chunks.push(c as Buffer);
      }
      bytes = Buffer.concat(chunks);
    }
  } catch (e) {
    if (e instanceof CtlError) throw e;
    throw new CtlError('file_unreadable', `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return bytes.toString('utf8');
}

/** How much `--file`, `--apply` and `--replace` read (a file or standard input). */
const INPUT_MAX_BYTES = 16 * 1024 * 1024;

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Clears a terminal screen and puts the cursor top left (what `clear` does). */
export const CLEAR_SCREEN = '\x1b[H\x1b[2J\x1b[3J';
