import type { IncomingMessage, ServerResponse } from 'node:http';
import { writeHealthReply, type HealthResponder } from './health-routes.js';

/** A node:http request listener. */
export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Path and query string of an origin-form request target (`/path?query`), split where Koa's
 * URL parser (parseurl) would split it; null for any other form (absolute form, `*`, or a
 * character that makes parseurl fall back to the full URL parser), which Koa then parses.
 */
export function splitOriginForm(target: string): { path: string; query: string } | null {
  if (target.charCodeAt(0) !== 0x2f /* / */) return null;
  let q = -1;
  for (let i = 1; i < target.length; i++) {
    switch (target.charCodeAt(i)) {
      case 0x3f /* ? */:
        if (q < 0) q = i;
        break;
      case 0x09:
      case 0x0a:
      case 0x0c:
      case 0x0d:
      case 0x20:
      case 0x23 /* # */:
      case 0xa0:
      case 0xfeff:
        return null;
    }
  }
  return q < 0 ? { path: target, query: '' } : { path: target.slice(0, q), query: target.slice(q + 1) };
}

/**
 * Answers the health paths and `GET|HEAD /node` straight from node:http, in front of the
 * Koa application: load balancers poll these on every node many times a second, and the
 * Koa context, its middleware chain and its header handling cost about as much CPU as the
 * rest of the request. Every other request (and any request this handler cannot answer
 * without Koa's URL parsing) goes to `fallback` unchanged.
 */
export function withHealthFastPath(responder: HealthResponder, fallback: RequestListener): RequestListener {
  return function agentRequest(req, res) {
    const target = splitOriginForm(req.url ?? '');
    if (target !== null) {
      let reply;
      try {
        reply = responder.answer(req.method, target.path, target.query);
      } catch {
        // An unexpected failure: the Koa chain answers the same request with its 500 and logs it.
        reply = undefined;
      }
      if (reply !== undefined) {
        try {
          writeHealthReply(res, reply);
          return;
        } catch {
          // Nothing was sent (e.g. an extra header node refuses): let Koa answer and report it.
          if (res.headersSent) return;
        }
      }
    }
    fallback(req, res);
  };
}
