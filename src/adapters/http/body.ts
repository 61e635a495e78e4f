import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { HttpError } from './errors.js';

/** Largest request body accepted (spec §4). */
export const MAX_BODY_BYTES = 64 * 1024;

/** A key that would reach Object.prototype through a naive merge; refused anywhere in a body. */
const FORBIDDEN_KEY = '__proto__';

function isRawBodyError(err: unknown): err is { status: number; type: string; message: string } {
  return typeof err === 'object' && err !== null && typeof (err as { status?: unknown }).status === 'number';
}

/**
 * Reads the request body as a JSON object: 413 beyond 64 KiB, 400 when it is not JSON or not
 * an object. An empty body is `{}`, so endpoints whose fields are all optional accept none.
 */
export async function readJsonObject(ctx: Context): Promise<Record<string, unknown>> {
  const declared = ctx.request.length;
  if (declared !== undefined && declared > MAX_BODY_BYTES) {
    throw new HttpError(413, 'body_too_large', `request body is ${declared} bytes; the limit is ${MAX_BODY_BYTES}`);
  }
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: MAX_BODY_BYTES, length: ctx.get('content-length') || null, encoding: 'utf-8' });
  } catch (err) {
    if (isRawBodyError(err) && err.status === 413) {
      throw new HttpError(413, 'body_too_large', `request body exceeds the limit of ${MAX_BODY_BYTES} bytes`);
    }
    const message = err instanceof Error ? err.message : String(err);
    throw new HttpError(400, 'invalid_body', `could not read the request body: ${message}`);
  }
  if (text.trim() === '') return {};
  let forbidden = false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (key, value: unknown) => {
      if (key === FORBIDDEN_KEY) forbidden = true;
      return value;
    });
  } catch (err) {
    throw new HttpError(400, 'invalid_json', `request body is not valid JSON: ${(err as Error).message}`);
  }
  if (forbidden) throw new HttpError(400, 'invalid_body', `request body may not contain the key "${FORBIDDEN_KEY}"`);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    const got = parsed === null ? 'null' : Array.isArray(parsed) ? 'an array' : typeof parsed;
    throw new HttpError(400, 'invalid_body', `request body must be a JSON object, got ${got}`);
  }
  return parsed as Record<string, unknown>;
}
