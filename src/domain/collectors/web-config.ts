import { ValidationError, type Problem } from '../errors.js';
import { compileSchema, describeValue, problemsOf } from './definition-schema.js';

/** How a TLS client certificate is asked for (the exporter-toolkit's client_auth_type). */
export type ClientAuthType = 'NoClientCert' | 'RequestClientCert' | 'RequireAnyClientCert' | 'VerifyClientCertIfGiven' | 'RequireAndVerifyClientCert';

/** TLS settings of the web configuration (files are read by the exporter, not here). */
export interface WebTlsConfig {
  readonly certFile?: string;
  readonly keyFile?: string;
  /** PEM given inline instead of a file. */
  readonly cert?: string;
  readonly key?: string;
  readonly clientAuthType: ClientAuthType;
  readonly clientCaFile?: string;
  readonly clientCa?: string;
  /** OpenSSL spellings: TLSv1, TLSv1.1, TLSv1.2, TLSv1.3. */
  readonly minVersion: TlsVersion;
  readonly maxVersion?: TlsVersion;
  /** OpenSSL cipher names (from the Go names of the file). */
  readonly ciphers?: readonly string[];
  readonly preferServerCipherSuites: boolean;
  /** Named curves (P-256, P-384, P-521, X25519). */
  readonly curves?: readonly string[];
}

/** A TLS protocol version as node:tls spells it. */
export type TlsVersion = 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';

/** The web configuration file, validated. */
export interface WebConfig {
  readonly tls: WebTlsConfig | null;
  /** User name -> bcrypt hash. Empty: no authentication. */
  readonly basicAuthUsers: Readonly<Record<string, string>>;
  /** Headers added to every response. */
  readonly headers: Readonly<Record<string, string>>;
}

const TLS_VERSIONS: Readonly<Record<string, TlsVersion>> = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' };

/** Go's names of the TLS 1.0-1.2 cipher suites it lets a configuration choose, and OpenSSL's. */
const CIPHERS: Readonly<Record<string, string>> = {
  TLS_RSA_WITH_AES_128_CBC_SHA: 'AES128-SHA',
  TLS_RSA_WITH_AES_256_CBC_SHA: 'AES256-SHA',
  TLS_RSA_WITH_AES_128_GCM_SHA256: 'AES128-GCM-SHA256',
  TLS_RSA_WITH_AES_256_GCM_SHA384: 'AES256-GCM-SHA384',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
};

const CURVES: Readonly<Record<string, string>> = { CurveP256: 'P-256', CurveP384: 'P-384', CurveP521: 'P-521', X25519: 'X25519' };

/** Headers the exporter sets itself; a configuration may not replace them. */
const RESERVED_HEADERS = new Set(['authorization', 'content-type', 'content-encoding', 'content-length', 'server', 'www-authenticate', 'vary', 'allow']);

const WEB_CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    tls_server_config: {
      type: 'object',
      additionalProperties: false,
      properties: {
        cert_file: { type: 'string', minLength: 1 },
        key_file: { type: 'string', minLength: 1 },
        cert: { type: 'string', minLength: 1 },
        key: { type: 'string', minLength: 1 },
        client_auth_type: { enum: ['NoClientCert', 'RequestClientCert', 'RequireAnyClientCert', 'VerifyClientCertIfGiven', 'RequireAndVerifyClientCert'] },
        client_ca_file: { type: 'string', minLength: 1 },
        client_ca: { type: 'string', minLength: 1 },
        min_version: { enum: Object.keys(TLS_VERSIONS) },
        max_version: { enum: Object.keys(TLS_VERSIONS) },
        cipher_suites: { type: 'array', items: { enum: Object.keys(CIPHERS) } },
        prefer_server_cipher_suites: { type: 'boolean' },
        curve_preferences: { type: 'array', items: { enum: Object.keys(CURVES) } },
      },
    },
    http_server_config: {
      type: 'object',
      additionalProperties: false,
      properties: {
        http2: { type: 'boolean' },
        headers: { type: 'object', additionalProperties: { type: 'string' } },
      },
    },
    basic_auth_users: { type: ['object', 'null'], additionalProperties: { type: 'string' } },
  },
} as const;

let validate: ReturnType<typeof compileSchema> | null = null;

const BCRYPT = /^\$2[abxy]?\$\d{2}\$[./A-Za-z0-9]{53}$/;
/** An HTTP header name (RFC 9110 token): what node:http accepts. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value node:http sends: tabs, visible ASCII and bytes above 0x7f written as one byte each, no control characters. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

type Raw = Record<string, unknown>;
const isObject = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The problems of a parsed web configuration file, and the configuration when there are none.
 * The rules beyond the schema (bcrypt hashes, header names and values, TLS settings that go
 * together) are checked on every part whose shape is right, so that one start lists every
 * problem; `tls` is the TLS section as read when that section itself has no problem (its
 * files can then be checked too).
 */
export function webConfigProblems(raw: unknown, source: string): { readonly problems: Problem[]; readonly config: WebConfig | null; readonly tls: WebTlsConfig | null } {
  validate ??= compileSchema(WEB_CONFIG_SCHEMA);
  const doc = raw ?? {};
  const problems: Problem[] = problemsOf(validate, source, doc);
  const d = isObject(doc) ? doc : {};
  const users: Record<string, string> = {};
  for (const [user, hash] of Object.entries(isObject(d['basic_auth_users']) ? d['basic_auth_users'] : {})) {
    if (typeof hash !== 'string') continue;
    if (user.includes(':')) problems.push({ path: `${source}.basic_auth_users.${user}`, message: 'a user name cannot contain ":"' });
    if (!BCRYPT.test(hash)) problems.push({ path: `${source}.basic_auth_users.${user}`, message: `expected a bcrypt hash ($2y$10$...), got ${describeValue(hash.slice(0, 12))}...` });
    users[user] = hash;
  }
  const http = isObject(d['http_server_config']) ? d['http_server_config'] : {};
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(isObject(http['headers']) ? http['headers'] : {})) {
    const path = `${source}.http_server_config.headers.${name}`;
    // node:http refuses to send such a header: every answer would fail.
    if (!HEADER_NAME.test(name)) problems.push({ path, message: `invalid header name ${describeValue(name)}: letters, digits and ! # $ % & ' * + . ^ _ \` | ~ -` });
    else if (RESERVED_HEADERS.has(name.toLowerCase())) problems.push({ path, message: 'this header is set by the exporter and cannot be configured' });
    if (typeof value !== 'string') continue;
    if (!HEADER_VALUE.test(value)) problems.push({ path, message: `invalid header value ${describeValue(value)}: no line breaks or other control characters, and no characters beyond U+00FF` });
    headers[name] = value;
  }
  const t = d['tls_server_config'];
  let tls: WebTlsConfig | null = null;
  if (isObject(t) && Object.keys(t).length > 0) {
    const path = `${source}.tls_server_config`;
    const str = (k: string) => (typeof t[k] === 'string' ? (t[k] as string) : undefined);
    if (!str('cert_file') === !str('cert')) problems.push({ path: `${path}.cert_file`, message: 'give the certificate as cert_file or as cert (one of them)' });
    if (!str('key_file') === !str('key')) problems.push({ path: `${path}.key_file`, message: 'give the private key as key_file or as key (one of them)' });
    const clientAuthType = (str('client_auth_type') ?? 'NoClientCert') as ClientAuthType;
    const verifies = clientAuthType === 'RequireAndVerifyClientCert' || clientAuthType === 'VerifyClientCertIfGiven';
    if (verifies && !str('client_ca_file') && !str('client_ca')) problems.push({ path: `${path}.client_ca_file`, message: `client_auth_type ${clientAuthType} needs client_ca_file (or client_ca)` });
    if (!verifies && (str('client_ca_file') || str('client_ca'))) problems.push({ path: `${path}.client_auth_type`, message: 'client_ca_file is given but client certificates are not verified: set client_auth_type to RequireAndVerifyClientCert or VerifyClientCertIfGiven' });
    const minVersion = TLS_VERSIONS[str('min_version') ?? 'TLS12'];
    const maxVersion = str('max_version') ? TLS_VERSIONS[str('max_version')!] : undefined;
    if (minVersion && maxVersion && maxVersion < minVersion) problems.push({ path: `${path}.max_version`, message: `max_version ${str('max_version')} is below min_version ${str('min_version') ?? 'TLS12'}` });
    const suites = Array.isArray(t['cipher_suites']) ? (t['cipher_suites'] as unknown[]) : undefined;
    const curves = Array.isArray(t['curve_preferences']) ? (t['curve_preferences'] as unknown[]) : undefined;
    if (!problems.some((p) => p.path.startsWith(path))) {
      tls = {
        ...(str('cert_file') ? { certFile: str('cert_file')! } : {}),
        ...(str('key_file') ? { keyFile: str('key_file')! } : {}),
        ...(str('cert') ? { cert: str('cert')! } : {}),
        ...(str('key') ? { key: str('key')! } : {}),
        clientAuthType,
        ...(str('client_ca_file') ? { clientCaFile: str('client_ca_file')! } : {}),
        ...(str('client_ca') ? { clientCa: str('client_ca')! } : {}),
        minVersion: minVersion ?? 'TLSv1.2',
        ...(maxVersion ? { maxVersion } : {}),
        ...(suites ? { ciphers: suites.map((c) => CIPHERS[c as string]!) } : {}),
        preferServerCipherSuites: t['prefer_server_cipher_suites'] === true,
        ...(curves ? { curves: curves.map((c) => CURVES[c as string]!) } : {}),
      };
    }
  }
  return { problems, config: problems.length ? null : { tls, basicAuthUsers: users, headers }, tls };
}

/**
 * Validates a parsed web configuration file (the Prometheus exporter-toolkit format:
 * tls_server_config, http_server_config, basic_auth_users with bcrypt hashes). Throws a
 * ValidationError (code invalid_config) listing every problem, each path starting with `source`.
 */
export function parseWebConfig(raw: unknown, source: string): WebConfig {
  const { problems, config } = webConfigProblems(raw, source);
  if (!config) throw new ValidationError(problems, 'invalid_config');
  return config;
}
