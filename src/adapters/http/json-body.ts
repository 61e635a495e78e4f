import type { Exchange } from './exchange.js';

/** Content-Type of the API's JSON bodies. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** Sets `value` as the JSON body (status 200 unless given or set before). */
export function setJsonBody(ex: Exchange, value: unknown, status?: number): void {
  ex.send(Buffer.from(JSON.stringify(value) ?? 'null'), JSON_TYPE, status);
}
