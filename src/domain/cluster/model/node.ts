/** Watchdog policy of a node: off, use it if it works, or refuse to lead without it. */
export type WatchdogMode = 'off' | 'automatic' | 'required';

/** Tag values as written in YAML. */
export type TagValue = string | number | boolean;

/** The settings of this node that the HA decisions need (from the local YAML file). */
export interface NodeSettings {
  readonly scope: string;
  readonly name: string;
  /** http(s)://host:port of this node's REST API, as peers reach it. */
  readonly apiUrl: string;
  /** postgres://host:port/postgres of this node's database, as peers reach it. */
  readonly connUrl: string;
  readonly tags: Readonly<Record<string, TagValue>>;
  readonly watchdogMode: WatchdogMode;
  readonly svcVersion: string;
}

/** True when the tag is set to a true-ish value (`true`, `"true"`, 1). */
export function tagIsTrue(tags: Readonly<Record<string, TagValue>>, key: string): boolean {
  const v = tags[key];
  return v === true || v === 1 || (typeof v === 'string' && ['true', 'yes', 'on', '1'].includes(v.toLowerCase()));
}

/** User-defined tags only: everything but the ones Warden interprets itself. */
export const RESERVED_TAGS = ['nofailover', 'noloadbalance', 'clonefrom', 'nosync', 'nostream'] as const;
