import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Random } from '../../../sim/random.js';

export { Random };

/**
 * Shared parts of the HTTP fuzz tests (the agent's REST API and the exporter's): the seed, a
 * raw HTTP/1.1 client that can send what fetch refuses to (bad framing, raw bytes in the
 * request line, half-closed connections), a small response parser, and the report of a
 * failing case in a form that can be replayed.
 */

/** The run's seed: WARDEN_FUZZ_SEED when set (a replay), otherwise fresh from crypto. */
export function fuzzSeed(): number {
  const fromEnv = process.env['WARDEN_FUZZ_SEED'];
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    const n = Number(fromEnv.trim());
    if (!Number.isSafeInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`WARDEN_FUZZ_SEED must be an integer 0..4294967295, got ${JSON.stringify(fromEnv)}`);
    return n;
  }
  return randomBytes(4).readUInt32BE(0);
}

/** How many cases to run: WARDEN_FUZZ_CASES when set, else `fallback`. */
export function fuzzCases(fallback: number): number {
  const n = Number(process.env['WARDEN_FUZZ_CASES'] ?? '');
  return Number.isSafeInteger(n) && n > 0 ? n : fallback;
}

/** One request as it goes on the wire. */
export interface WireRequest {
  readonly method: string;
  /** The request-target, bytes as written (latin1: raw bytes above 0x7f are allowed). */
  readonly target: string;
  readonly version: 'HTTP/1.1' | 'HTTP/1.0';
  /** Header lines in order, as written (duplicates and contradictions allowed). */
  readonly headers: readonly (readonly [string, string])[];
  /** The body bytes as framed (already chunk-encoded when the headers say chunked). */
  readonly body: Buffer;
  /** Why the request is shaped this way (for the report). */
  readonly note: string;
  /** The client closes its side after writing (a truncated body is then final). */
  readonly halfClose?: boolean;
  /** The bytes sent do not end where the server's parser thinks the request ends (a valid request on the same connection would not be one). */
  readonly desynced?: boolean;
  /** Bytes after the request that the server parses as further requests (each gets an answer or the connection closes). */
  readonly trailing?: boolean;
}

/** The request's bytes. */
export function wireBytes(req: WireRequest): Buffer {
  const head = `${req.method} ${req.target} ${req.version}\r\n${req.headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), req.body]);
}

/** The request for a report: readable, with every byte recoverable (a JS string literal of the latin1 bytes, cut when huge). */
export function describeRequest(req: WireRequest): string {
  const bytes = wireBytes(req);
  const LIMIT = 1500;
  const shown = bytes.subarray(0, LIMIT).toString('latin1');
  const literal = JSON.stringify(shown);
  const cut = bytes.length > LIMIT ? ` ... (${bytes.length} bytes in all; the body is ${req.body.length} bytes)` : '';
  return `${req.method} ${req.target.length > 200 ? `${req.target.slice(0, 200)}...(${req.target.length} chars)` : req.target} [${req.note}]\n    raw: ${literal}${cut}`;
}

/** One parsed response. */
export interface RawResponse {
  readonly status: number;
  readonly statusLine: string;
  /** Header names lowercased; repeated ones joined with ', '. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** An event stream: only its start was read. */
  readonly stream: boolean;
}

export type NextResult = RawResponse | { readonly kind: 'closed'; readonly partial: string } | { readonly kind: 'timeout'; readonly partial: string };

export function isResponse(r: NextResult): r is RawResponse {
  return (r as RawResponse).status !== undefined;
}

const NO_BODY_STATUS = new Set([204, 304]);

/**
 * A raw client connection: write bytes, then read responses one at a time (interim 1xx
 * answers skipped). Bodies are read by Content-Length, chunked encoding, or until the close;
 * an event stream is returned as soon as its headers arrived.
 */
export class RawConnection {
  private buf: Buffer = Buffer.alloc(0);
  private ended = false;
  private waiter: (() => void) | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
      this.wake();
    });
    const onEnd = () => {
      this.ended = true;
      this.wake();
    };
    socket.on('end', onEnd);
    socket.on('close', onEnd);
    // A reset after the server answered and closed (it had not read everything we sent) is an end like another.
    socket.on('error', onEnd);
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host);
      socket.setNoDelay(true);
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get closed(): boolean {
    return this.ended;
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  /** Writes `data` in up to `pieces` parts, each in its own write (the server's parser sees split input). */
  async write(data: Buffer, pieces = 1): Promise<void> {
    const cuts = [0];
    for (let i = 1; i < pieces; i++) cuts.push(Math.floor((data.length * i) / pieces));
    cuts.push(data.length);
    for (let i = 0; i + 1 < cuts.length; i++) {
      if (this.ended || this.socket.destroyed) return;
      const part = data.subarray(cuts[i], cuts[i + 1]);
      if (part.length === 0) continue;
      await new Promise<void>((resolve) => {
        // A write the server refused (it answered and closed early) is not the client's failure to report here.
        this.socket.write(part, () => resolve());
      });
    }
  }

  end(): void {
    if (!this.socket.destroyed) this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** The next response to a request of `method`, or why none came. */
  async next(method: string, timeoutMs: number): Promise<NextResult> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.tryParse(method);
      if (parsed === 'interim') continue;
      if (parsed !== null) return parsed;
      if (this.ended) return { kind: 'closed', partial: this.buf.subarray(0, 300).toString('latin1') };
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'timeout', partial: this.buf.subarray(0, 300).toString('latin1') };
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  /** A complete response at the start of the buffer (consumed), 'interim' for a skipped 1xx, null when more bytes are needed. */
  private tryParse(method: string): RawResponse | 'interim' | null {
    const headEnd = this.buf.indexOf('\r\n\r\n');
    if (headEnd < 0) return null;
    const lines = this.buf.subarray(0, headEnd).toString('latin1').split('\r\n');
    const statusLine = lines[0] ?? '';
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const i = line.indexOf(':');
      if (i < 0) continue;
      const name = line.slice(0, i).trim().toLowerCase();
      const value = line.slice(i + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const start = headEnd + 4;
    const done = (bodyEnd: number, body: Buffer, stream = false): RawResponse => {
      this.buf = this.buf.subarray(bodyEnd);
      return { status, statusLine, headers, body, stream };
    };
    if (status >= 100 && status < 200 && status !== 101) {
      this.buf = this.buf.subarray(start);
      return 'interim';
    }
    if (method === 'HEAD' || NO_BODY_STATUS.has(status) || status === 101) return done(start, Buffer.alloc(0));
    if ((headers['content-type'] ?? '').startsWith('text/event-stream')) return done(this.buf.length, this.buf.subarray(start), true);
    const te = headers['transfer-encoding'];
    if (te !== undefined && /chunked/i.test(te)) {
      const parts: Buffer[] = [];
      let at = start;
      for (;;) {
        const lineEnd = this.buf.indexOf('\r\n', at);
        if (lineEnd < 0) return null;
        const size = parseInt(this.buf.subarray(at, lineEnd).toString('latin1'), 16);
        if (!Number.isFinite(size)) return done(this.buf.length, Buffer.concat(parts));
        if (size === 0) {
          const trailerEnd = this.buf.indexOf('\r\n\r\n', lineEnd);
          if (trailerEnd >= 0) return done(trailerEnd + 4, Buffer.concat(parts));
          if (this.buf.length >= lineEnd + 4 && this.buf.subarray(lineEnd, lineEnd + 4).toString() === '\r\n\r\n') return done(lineEnd + 4, Buffer.concat(parts));
          return null;
        }
        if (this.buf.length < lineEnd + 2 + size + 2) return null;
        parts.push(this.buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        at = lineEnd + 2 + size + 2;
      }
    }
    const cl = headers['content-length'];
    if (cl !== undefined) {
      const n = Number(cl);
      if (this.buf.length < start + n) return null;
      return done(start + n, this.buf.subarray(start, start + n));
    }
    // Neither: the body ends with the connection.
    if (!this.ended) return null;
    return done(this.buf.length, this.buf.subarray(start));
  }
}

/**
 * Uncaught exceptions and unhandled rejections while the fuzz test runs, with the case running
 * then. Mocha's own listeners are set aside meanwhile (they would end the test at the first one,
 * before the case that caused it is reported) and put back by `unhook`.
 */
export class ProcessEvents {
  readonly seen: string[] = [];
  current = '';
  private saved: { exception: NodeJS.UncaughtExceptionListener[]; rejection: NodeJS.UnhandledRejectionListener[] } | null = null;
  private readonly onException = (err: unknown) => this.seen.push(`uncaughtException during ${this.current}: ${String((err as Error)?.stack ?? err)}`);
  private readonly onRejection = (err: unknown) => this.seen.push(`unhandledRejection during ${this.current}: ${String((err as Error)?.stack ?? err)}`);

  hook(): void {
    this.saved = { exception: process.listeners('uncaughtException'), rejection: process.listeners('unhandledRejection') };
    process.removeAllListeners('uncaughtException');
    process.removeAllListeners('unhandledRejection');
    process.on('uncaughtException', this.onException);
    process.on('unhandledRejection', this.onRejection);
  }

  unhook(): void {
    process.off('uncaughtException', this.onException);
    process.off('unhandledRejection', this.onRejection);
    if (this.saved) {
      for (const l of this.saved.exception) process.on('uncaughtException', l);
      for (const l of this.saved.rejection) process.on('unhandledRejection', l);
      this.saved = null;
    }
  }
}

/** Failures of a run, one line per distinct kind, reported with the seed and how to replay it. */
export class CaseLog {
  private readonly bySignature = new Map<string, { text: string; count: number }>();
  count = 0;

  constructor(
    private readonly suite: string,
    private readonly seed: number,
    private readonly replay = '',
  ) {}

  add(signature: string, text: string): void {
    this.count++;
    const known = this.bySignature.get(signature);
    if (known) known.count++;
    else this.bySignature.set(signature, { text, count: 1 });
  }

  get empty(): boolean {
    return this.count === 0;
  }

  report(): string {
    const distinct = [...this.bySignature.values()];
    return [
      `${this.suite}: ${this.count} failing case(s), ${distinct.length} distinct; replay with WARDEN_FUZZ_SEED=${this.seed}${this.replay ? ` ${this.replay}` : ''}`,
      ...distinct.slice(0, 12).map((t, i) => `#${i + 1} (${t.count}x, the first:) ${t.text}`),
      ...(distinct.length > 12 ? [`... and ${distinct.length - 12} more distinct`] : []),
    ].join('\n');
  }
}

/** A JSON text writer whose `RawJson` values are written verbatim (numbers JSON.stringify cannot write, such as 1e999). */
export class RawJson {
  constructor(readonly text: string) {}
}

export function jsonText(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(jsonText).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${JSON.stringify(k)}:${jsonText(x)}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

/** Chunked transfer coding of `body` in random pieces (optionally with chunk extensions). */
export function chunked(rng: Random, body: Buffer, opts: { extensions?: boolean } = {}): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    const n = Math.min(body.length - at, rng.chance(0.3) ? rng.int(1, 16) : rng.int(1, 20_000));
    const ext = opts.extensions && rng.chance(0.3) ? ';name=value' : '';
    parts.push(Buffer.from(`${n.toString(16)}${ext}\r\n`, 'latin1'), body.subarray(at, at + n), Buffer.from('\r\n'));
    at += n;
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

/** Short text of a response for reports. */
export function describeResponse(r: NextResult): string {
  if (!isResponse(r)) return `${r.kind}${r.partial ? ` after ${JSON.stringify(r.partial)}` : ' with nothing received'}`;
  const type = r.headers['content-type'] ?? '(no content-type)';
  const body = r.body.subarray(0, 300).toString('utf8');
  return `${r.statusLine} | ${type} | ${JSON.stringify(body)}${r.body.length > 300 ? '...' : ''}`;
}

/** A string of `n` random characters from `alphabet`. */
export function randomText(rng: Random, n: number, alphabet: string): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[rng.int(0, alphabet.length - 1)];
  return s;
}

/** A path as sent, possibly mangled: slashes, case, percent-encoding, other request-target forms, raw bytes, lengths. */
export function mangleTarget(rng: Random, path: string, port: number): { target: string; note: string } {
  switch (rng.weighted({ none: 50, slash: 8, slashes: 2, leadingSlashes: 2, upper: 3, percent: 3, dotSegments: 2, params: 1, absolute: 3, badAbsolute: 2, asterisk: 1, rawBytes: 2, fragment: 2, long: 2, tooLong: 1, controlChar: 1, space: 1 })) {
    case 'none':
      return { target: path, note: '' };
    case 'slash':
      return { target: `${path}/`, note: 'trailing slash' };
    case 'slashes':
      return { target: `${path}//`, note: 'two trailing slashes' };
    case 'leadingSlashes':
      return { target: `/${path}`, note: 'double leading slash' };
    case 'upper':
      return { target: rng.chance(0.5) ? path.toUpperCase() : [...path].map((c) => (rng.chance(0.5) ? c.toUpperCase() : c)).join(''), note: 'case' };
    case 'percent': {
      const i = rng.int(1, Math.max(1, path.length - 1));
      const c = path[i] ?? 'a';
      return { target: `${path.slice(0, i)}%${c.charCodeAt(0).toString(16).padStart(2, '0')}${path.slice(i + 1)}`, note: 'percent-encoded' };
    }
    case 'dotSegments':
      return { target: rng.pick([`${path}/..`, `${path}/.`, `/.${path}`, `/x/..${path}`]), note: 'dot segments' };
    case 'params':
      return { target: `${path};jsessionid=1`, note: 'path parameter' };
    case 'absolute':
      return { target: `${rng.pick(['http', 'https', 'HTTP'])}://127.0.0.1:${port}${path}`, note: 'absolute form' };
    case 'badAbsolute':
      return { target: `${rng.pick(['http://[::1', 'http://xn--', 'http://a:b@', 'http://%zz', 'https://[fe80::1%25eth0]', 'http://a:99999999', 'http://0x7f.1', 'http://', 'file://', 'http:'])}${path}`, note: 'malformed absolute form' };
    case 'asterisk':
      return { target: '*', note: 'asterisk form' };
    case 'rawBytes':
      return { target: `${path}${rng.pick(['\u00e9', '\u00ff', '\u00c3\u00a9', '\u0080', '\u00a0'])}`, note: 'raw bytes above 0x7f' };
    case 'fragment':
      return { target: `${path}#${rng.pick(['', 'x', 'lag=1'])}`, note: 'fragment' };
    case 'long':
      return { target: rng.chance(0.5) ? `${path}${'/'.repeat(rng.int(2, 8000))}` : `/${'a'.repeat(rng.int(1000, 12_000))}`, note: 'long path' };
    case 'tooLong':
      return { target: `/${'a'.repeat(rng.int(17_000, 80_000))}`, note: 'path over the header limit' };
    case 'controlChar':
      return { target: `${path}${rng.pick(['\u0001', '\u007f', '\t', '\u0000'])}`, note: 'control character' };
    default:
      return { target: `${path} x`, note: 'space in target' };
  }
}

/** Headers about the connection and the protocol itself: Host (or none), an upgrade, Expect, oversized and malformed headers, Connection. */
export function protocolHeaders(rng: Random, port: number, headers: [string, string][], notes: string[]): void {
  if (rng.chance(0.97)) headers.push(['Host', rng.chance(0.95) ? `127.0.0.1:${port}` : rng.pick(['', 'x', 'a b', '[::1', '\u00e9'])]);
  else notes.push('no Host');
  if (rng.chance(0.03)) {
    headers.push(['Connection', rng.pick(['Upgrade', 'keep-alive, Upgrade', 'Upgrade, HTTP2-Settings'])], ['Upgrade', rng.pick(['websocket', 'h2c', 'x'])]);
    notes.push('upgrade');
  }
  if (rng.chance(0.03)) {
    headers.push(['Expect', rng.pick(['100-continue', 'x-weird', '100-continue, x'])]);
    notes.push('expect');
  }
  if (rng.chance(0.02)) {
    headers.push([rng.pick(['X-Big', 'Cookie']), 'x'.repeat(rng.int(15_000, 40_000))]);
    notes.push('big header');
  }
  if (rng.chance(0.01)) {
    headers.push(['Bad Header', 'x']);
    notes.push('malformed header name');
  }
  if (rng.chance(0.02)) headers.push(['X-Obs', '\u00e9\u00ff']);
  if (rng.chance(0.05)) headers.push(['Connection', rng.pick(['close', 'keep-alive', 'close, keep-alive'])]);
}

/** A body on the wire and what its framing does to the connection. */
export interface Framed {
  readonly body: Buffer;
  readonly halfClose: boolean;
  readonly desynced: boolean;
  readonly trailing: boolean;
}

/**
 * Frames `content` (adds its headers): a matching Content-Length, chunked, none at all, lengths
 * that are short, long, malformed, contradictory or huge, malformed chunks. Where the server
 * would rightly wait for bytes that never come, the client half-closes.
 */
export function frame(rng: Random, headers: [string, string][], notes: string[], content: { bytes: Buffer; note: string }): Framed {
  const bytes = content.bytes;
  notes.push(content.note);
  const framing = rng.weighted({ length: 70, chunked: 15, none: 3, short: 3, longHalfClose: 2, badLength: 3, badChunk: 2, hugeDeclared: 2 });
  notes.push(framing);
  switch (framing) {
    case 'length':
      headers.push(['Content-Length', String(bytes.length)]);
      return { body: bytes, halfClose: false, desynced: false, trailing: false };
    case 'chunked':
      headers.push(['Transfer-Encoding', 'chunked']);
      return { body: chunked(rng, bytes, { extensions: true }), halfClose: false, desynced: false, trailing: false };
    case 'none':
      // No framing: the bytes are the next request's.
      return { body: bytes, halfClose: false, desynced: bytes.length > 0, trailing: bytes.length > 0 };
    case 'short': {
      const n = rng.int(0, Math.max(0, bytes.length - 1));
      headers.push(['Content-Length', String(n)]);
      return { body: bytes, halfClose: false, desynced: bytes.length > n, trailing: bytes.length > n };
    }
    case 'longHalfClose':
      headers.push(['Content-Length', String(bytes.length + rng.int(1, 1000))]);
      return { body: bytes, halfClose: true, desynced: true, trailing: false };
    case 'badLength':
      for (const h of rng.pick<[string, string][]>([
        [['Content-Length', 'abc']],
        [['Content-Length', '-1']],
        [['Content-Length', '1e3']],
        [['Content-Length', ' 5 ']],
        [['Content-Length', '99999999999999999999999']],
        [['Content-Length', String(bytes.length)], ['Content-Length', String(bytes.length + 1)]],
        [['Content-Length', `${bytes.length}, ${bytes.length}`]],
        [['Content-Length', String(bytes.length)], ['Transfer-Encoding', 'chunked']],
        [['Transfer-Encoding', 'gzip']],
        [['Transfer-Encoding', 'chunked, gzip']],
        [['Transfer-Encoding', 'chunked'], ['Transfer-Encoding', 'chunked']],
      ]))
        headers.push(h);
      // Some of these are lengths Node takes (" 5 "): without the close the server would rightly wait for the rest.
      return { body: bytes, halfClose: true, desynced: true, trailing: false };
    case 'badChunk':
      headers.push(['Transfer-Encoding', 'chunked']);
      return {
        body: Buffer.concat([Buffer.from(rng.pick(['zz\r\n', '-1\r\n', 'ffffffffffffffffff\r\n', '5\r\nab\r\n0\r\n\r\n', '3\r\nabcdef\r\n', '1;\u0000\r\na\r\n0\r\n\r\n']), 'latin1'), bytes.subarray(0, 10)]),
        halfClose: rng.chance(0.5),
        desynced: true,
        trailing: false,
      };
    default:
      headers.push(['Content-Length', rng.pick(['70000', '1000000000000', String(2 ** 53 - 1)])]);
      return { body: bytes.subarray(0, Math.min(bytes.length, 1000)), halfClose: true, desynced: true, trailing: false };
  }
}

/** No body; now and then a zero Content-Length in a spelling of its own. */
export function emptyFrame(rng: Random, headers: [string, string][], notes: string[]): Framed {
  if (rng.chance(0.03)) {
    headers.push(['Content-Length', rng.pick(['0', '00', '+0'])]);
    notes.push('zero length');
    return { body: Buffer.alloc(0), halfClose: false, desynced: true, trailing: false };
  }
  return { body: Buffer.alloc(0), halfClose: false, desynced: false, trailing: false };
}

/**
 * Waits until `server` holds no connection (every client of the case has closed its own); false
 * when one is still open after `ms`: a socket the server never closes holds a descriptor (and
 * one of MAX_CONNECTIONS places) until a timeout.
 */
export async function connectionsDrained(server: Server, ms = 1000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const n = await new Promise<number>((resolve) => server.getConnections((_e, count) => resolve(count)));
    if (n === 0) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 2));
  }
}
