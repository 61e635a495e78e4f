import { createHash, timingSafeEqual } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { HttpError } from './errors.js';
import type { Exchange } from './exchange.js';

/** How the listener treats client certificates (`restapi.verify_client`). */
export type VerifyClient = 'none' | 'optional' | 'required';

/** Access-control settings of the REST API (from `restapi` in the local YAML). */
export interface AccessSettings {
  /** Client IPs, CIDR ranges or host names allowed to call unsafe endpoints; absent or empty: everyone. */
  readonly allowlist?: readonly string[];
  /** The addresses a host name of the allowlist resolved to (none: the name allows nothing). */
  readonly addressesOf?: (name: string) => readonly string[];
  /** Only the allowlist's addresses may call, even while it is empty (it is filled from the cluster's members). */
  readonly allowlistRequired?: boolean;
  readonly verifyClient?: VerifyClient;
  readonly authentication?: { readonly username: string; readonly password: string } | null;
}

/** The realm sent in `WWW-Authenticate` (the API's Basic auth). */
export const AUTH_REALM = 'svc';

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** True for methods that change something and therefore go through access control. */
export function isUnsafeMethod(method: string): boolean {
  return UNSAFE_METHODS.has(method);
}

/** Parses an allowlist entry (`10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`); undefined when it is neither. */
export function parseAllowlistEntry(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, ...rest] = entry.trim().split('/');
  const version = isIP(address);
  if (!version || rest.length) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const max = version === 4 ? 32 : 128;
  if (prefixText === undefined) return { address, prefix: max, family };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return undefined;
  return { address, prefix: Number(prefixText), family };
}

/**
 * A host name as an allowlist entry may name one (letters, digits, hyphens, dot-separated
 * labels of at most 63 characters), not something that only looks like an address.
 */
export function isAllowlistHostName(entry: string): boolean {
  if (entry.length > 253 || !/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/.test(entry)) return false;
  // 10.0.0.300 is a mistyped address, not a name.
  return !/^[\d.]+$/.test(entry);
}

/** A client address as the allowlist compares it: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) becomes plain IPv4. */
function normalizeAddress(address: string): { address: string; family: 'ipv4' | 'ipv6' } | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  const version = isIP(address);
  return version ? { address, family: version === 4 ? 'ipv4' : 'ipv6' } : undefined;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Builds the access check for unsafe endpoints: allowlist (403), client
 * certificate when `verify_client` is set (403), Basic auth when configured (401 with
 * `WWW-Authenticate`). Credentials are compared as SHA-256 digests with timingSafeEqual, so
 * neither the length nor the content of the secret leaks through timing.
 */
export function createAccessCheck(settings: AccessSettings): (ex: Exchange) => void {
  let allow: BlockList | null = null;
  if ((settings.allowlist && settings.allowlist.length > 0) || settings.allowlistRequired) {
    allow = new BlockList();
    for (const entry of settings.allowlist ?? []) {
      const parsed = parseAllowlistEntry(entry);
      if (parsed) {
        allow.addSubnet(parsed.address, parsed.prefix, parsed.family);
      } else if (isAllowlistHostName(entry)) {
        for (const address of settings.addressesOf?.(entry) ?? []) {
          const ip = normalizeAddress(address);
          if (ip) allow.addAddress(ip.address, ip.family);
        }
      } else {
        throw new TypeError(`invalid allowlist entry ${JSON.stringify(entry)}`);
      }
    }
  }
  const verifyClient = settings.verifyClient ?? 'none';
  const auth = settings.authentication;
  const expected = auth ? digest(`${auth.username}:${auth.password}`) : null;

  return function checkAccess(ex: Exchange): void {
    if (allow) {
      const client = normalizeAddress(ex.req.socket.remoteAddress ?? '');
      if (!client || !allow.check(client.address, client.family)) {
        throw new HttpError(403, 'forbidden', `access from ${ex.req.socket.remoteAddress ?? 'unknown address'} is not allowed`);
      }
    }
    if (verifyClient !== 'none') {
      const socket = ex.req.socket as Partial<TLSSocket>;
      if (socket.authorized !== true) throw new HttpError(403, 'client_certificate_required', 'a valid client certificate is required');
    }
    if (expected) {
      const header = ex.header('authorization');
      const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
      const given = m ? digest(Buffer.from(m[1]!, 'base64').toString('utf8')) : null;
      if (!given || !timingSafeEqual(given, expected)) {
        throw new HttpError(401, 'unauthorized', header ? 'invalid credentials' : 'authentication required', {
          'WWW-Authenticate': `Basic realm="${AUTH_REALM}"`,
        });
      }
    }
  };
}
