import type { ExpositionFormat } from './exposition.js';

/** The answer to a scrape's Accept header: the format and its Content-Type. */
export interface NegotiatedFormat {
  readonly format: ExpositionFormat;
  readonly contentType: string;
}

/** Content-Type of the Prometheus text format. */
export const TEXT_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

interface MediaRange {
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
  readonly q: number;
  readonly order: number;
}

function parseList(header: string): MediaRange[] {
  return header
    .split(',')
    .map((part, order) => {
      const [type = '', ...rest] = part.split(';').map((s) => s.trim());
      const params: Record<string, string> = {};
      for (const p of rest) {
        const eq = p.indexOf('=');
        if (eq > 0) params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
      }
      const q = params['q'] === undefined ? 1 : Number(params['q']);
      return { type: type.toLowerCase(), params, q: Number.isFinite(q) ? q : 0, order };
    })
    .filter((r) => r.type !== '' && r.q > 0);
}

/**
 * Picks the exposition format from an Accept header: OpenMetrics (1.0.0 or 0.0.1) when it is
 * acceptable with at least the weight of the text format, else the text format (also for a
 * missing or unusable header, as Prometheus' own libraries do). `openMetrics` false: text only.
 */
export function negotiateFormat(accept: string | undefined, openMetrics = true): NegotiatedFormat {
  const text = { format: 'text', contentType: TEXT_CONTENT_TYPE } as const;
  if (!accept || !openMetrics) return text;
  let om: { q: number; order: number; version: string } | null = null;
  let plain: { q: number; order: number } | null = null;
  for (const r of parseList(accept)) {
    if (r.type === 'application/openmetrics-text') {
      const version = r.params['version'] ?? '1.0.0';
      if ((version === '1.0.0' || version === '0.0.1') && (!om || r.q > om.q)) om = { q: r.q, order: r.order, version };
    } else if (r.type === 'text/plain' || r.type === 'text/*' || r.type === '*/*') {
      if (!plain || r.q > plain.q) plain = { q: r.q, order: r.order };
    }
  }
  if (om && (!plain || om.q > plain.q || (om.q === plain.q && om.order < plain.order))) {
    return { format: 'openmetrics', contentType: `application/openmetrics-text; version=${om.version}; charset=utf-8` };
  }
  return text;
}

/** True when an Accept-Encoding header accepts gzip (by name or by `*`, with a weight above 0). */
export function acceptsGzip(acceptEncoding: string | undefined): boolean {
  if (!acceptEncoding) return false;
  const ranges = parseList(acceptEncoding.toLowerCase());
  const gzip = ranges.find((r) => r.type === 'gzip' || r.type === 'x-gzip');
  if (gzip) return true;
  const explicitNo = /(?:^|,)\s*(?:x-)?gzip\s*;\s*q=0(?:\.0*)?\s*(?:,|$)/.test(acceptEncoding.toLowerCase());
  return !explicitNo && ranges.some((r) => r.type === '*');
}
