/**
 * An ordered, case-insensitive header set built the way node's `setHeader` builds one:
 * setting a name already present replaces its value in place, removing and setting again
 * moves it to the end. `list()` gives the flat `[name, value, ...]` array `res.writeHead`
 * takes, so a prepared reply skips per-request header validation.
 */
export class ResponseHeaders {
  private readonly byName = new Map<string, readonly [string, string]>();

  constructor(initial: Readonly<Record<string, string>> = {}) {
    for (const name in initial) this.set(name, String(initial[name]));
  }

  /** Sets (or replaces in place) one header. */
  set(name: string, value: string): this {
    this.byName.set(name.toLowerCase(), [name, value]);
    return this;
  }

  /** Removes a header, whatever the case of its name. */
  remove(name: string): this {
    this.byName.delete(name.toLowerCase());
    return this;
  }

  /** The headers as a flat `[name, value, ...]` list. */
  list(): string[] {
    const out: string[] = [];
    for (const [name, value] of this.byName.values()) out.push(name, value);
    return out;
  }
}
