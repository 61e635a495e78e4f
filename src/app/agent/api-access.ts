import type { AllowlistNames } from '../../adapters/http/allowlist-names.js';
import type { AccessSettings } from '../../adapters/http/auth.js';
import type { LocalConfig } from './local-config-types.js';
import { accessSettingsOf } from './local-settings.js';

/** The hosts of the members' API URLs (`http://10.0.0.11:8008` -> `10.0.0.11`), without repeats, sorted. */
export function memberApiHosts(apiUrls: readonly string[]): string[] {
  const hosts = new Set<string>();
  for (const url of apiUrls) {
    try {
      const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
      if (host) hosts.add(host);
    } catch {
      // a member record with an unusable URL adds nothing
    }
  }
  return [...hosts].sort();
}

/** The allowlist in force: the file's entries, plus the members' API hosts when `allowlist_include_members` is on. */
export function allowlistEntries(local: LocalConfig, memberApiUrls: () => readonly string[]): string[] {
  const own = [...local.restapi.allowlist];
  return local.restapi.allowlist_include_members ? [...own, ...memberApiHosts(memberApiUrls())] : own;
}

/**
 * The REST API's access settings as the local file says now (it follows reloads), with the
 * members' hosts when the file asks for them (they follow the cluster's member records) and
 * the addresses of the host names among them. The same object is returned until one of those
 * changes, so the access check is rebuilt only then.
 */
export function apiAccess(local: () => LocalConfig, names: AllowlistNames, memberApiUrls: () => readonly string[]): () => AccessSettings {
  let built: { local: LocalConfig; version: number; entries: string; access: AccessSettings } | null = null;
  return () => {
    const cfg = local();
    const entries = allowlistEntries(cfg, memberApiUrls);
    const key = entries.join('\n');
    if (built?.local !== cfg || built.version !== names.version || built.entries !== key) {
      // New host names (a reload, a member joining) resolve in the background; until then they allow nothing.
      void names.follow(entries);
      built = {
        local: cfg,
        version: names.version,
        entries: key,
        access: {
          ...accessSettingsOf(cfg),
          allowlist: entries,
          allowlistRequired: cfg.restapi.allowlist_include_members,
          addressesOf: (name) => names.addressesOf(name),
        },
      };
    }
    return built.access;
  };
}
