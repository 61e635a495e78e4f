import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors.js';
import type { Exchange } from './exchange.js';

/** Largest request body accepted. */
export const MAX_BODY_BYTES = 64 * 1024;

/** Refuses bytes that are not UTF-8 instead of turning them into U+FFFD, which could then be stored. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** A key that would reach Object.prototype through a naive merge; refused anywhere in a body. */
const FORBIDDEN_KEY = '__proto__';

/** The declared Content-Length, or undefined when absent or not a number. */
function declaredLength(req: IncomingMessage): number | undefined {
  const v = req.headers['content-length'];
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/**
 * The request body as UTF-8 text: 413 once it passes `limit` bytes (counted while reading
 * when no length is declared), 400 when the connection ends early or the declared length is
 * not what arrived.
 */
function readText(req: IncomingMessage, limit: number): Promise<string> {
  const declared = declaredLength(req);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const done = (err: Error | null, text?: string) => {
      if (settled) return;
      settled = true;
      req.off('data', onData).off('end', onEnd).off('error', onError).off('aborted', onAborted);
      if (err) {
        // The rest of the body is read and dropped, so the answer can still be sent on this connection.
        req.resume();
        reject(err);
      } else resolve(text!);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limit) done(new HttpError(413, 'body_too_large', `request body exceeds the limit of ${MAX_BODY_BYTES} bytes`));
      else chunks.push(chunk);
    };
    const onEnd = () => {
      if (declared !== undefined && received !== declared) done(new HttpError(400, 'invalid_body', 'could not read the request body: request size did not match content length'));
      else {
        try {
          done(null, UTF8.decode(Buffer.concat(chunks)));
        } catch {
          done(new HttpError(400, 'invalid_body', 'request body is not valid UTF-8'));
        }
      }
    };
    const onError = (err: Error) => done(new HttpError(400, 'invalid_body', `could not read the request body: ${err.message}`));
    const onAborted = () => done(new HttpError(400, 'invalid_body', 'could not read the request body: request aborted'));
    req.on('data', onData).on('end', onEnd).on('error', onError).on('aborted', onAborted);
  });
}

/**
 * Reads the request body as a JSON object: 413 beyond 64 KiB, 400 when it is not JSON or not
 * an object. An empty body is `{}`, so endpoints whose fields are all optional accept none;
 * with `required` (a document that replaces another) it is a 400.
 */
export async function readJsonObject(ex: Exchange, opts: { readonly required?: string } = {}): Promise<Record<string, unknown>> {
  const declared = declaredLength(ex.req);
  if (declared !== undefined && declared > MAX_BODY_BYTES) {
    throw new HttpError(413, 'body_too_large', `request body is ${declared} bytes; the limit is ${MAX_BODY_BYTES}`);
  }
  const text = await readText(ex.req, MAX_BODY_BYTES);
  if (text.trim() === '') {
    if (opts.required !== undefined) throw new HttpError(400, 'invalid_body', `request body is empty: ${opts.required}`);
    return {};
  }
  let forbidden = false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (key, value: unknown) => {
      if (key === FORBIDDEN_KEY) forbidden = true;
      return value;
    });
  } catch (err) {
    if (err instanceof RangeError) throw new HttpError(400, 'invalid_json', 'request body is not valid JSON: nested too deeply');
    throw new HttpError(400, 'invalid_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
  if (forbidden) throw new HttpError(400, 'invalid_body', `request body may not contain the key "${FORBIDDEN_KEY}"`);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const got = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : typeof parsed;
    throw new HttpError(400, 'invalid_body', `request body must be a JSON object, got ${got}`);
  }
  return parsed as Record<string, unknown>;
}
