import { readFileSync } from 'node:fs';
import { ExponentialBackoff, handleWhen, noop, retry } from 'cockatiel';
import { isRecoverableError, type IOptions } from 'etcd3';
import { etcd3HostUrls, type Etcd3KeyValueOptions } from './etcd3-endpoints.js';

export { etcd3HostUrls, type Etcd3KeyValueOptions } from './etcd3-endpoints.js';

/** How long the watch stream waits before reconnecting, at most (the package's default is 30 s). */
const WATCH_RECONNECT_MAX_MS = 1000;

/**
 * Client options that make the `etcd3` package fail fast instead of retrying on its own:
 * the agent retries every tick, and a call must end within `retryTimeoutMs`.
 * - every unary call carries a gRPC deadline of the current `retryTimeoutMs()` (streams get theirs per call);
 * - no per-host circuit breaker: the default one keeps refusing calls for 5 s after etcd is back;
 * - the global policy only moves on to the next host (one attempt per host, no back-off);
 * - gRPC reconnects within a second after an outage and pings the watch stream so a dead
 *   connection is noticed. (`dialTimeout` is documented by etcd3 1.1 but not used by it.)
 */
export function etcd3ClientOptions(opts: Etcd3KeyValueOptions, retryTimeoutMs: () => number = () => opts.retryTimeoutMs): IOptions {
  const hosts = etcd3HostUrls(opts);
  const deadline = () => ({ deadline: Date.now() + retryTimeoutMs() });
  const options: IOptions = {
    hosts,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : deadline()),
    faultHandling: {
      host: () => noop,
      global: retry(handleWhen(isRecoverableError), { maxAttempts: hosts.length - 1 }),
      // The watch manager takes a backoff step, not a factory (it calls next() for each retry).
      watchBackoff: new ExponentialBackoff({ initialDelay: 100, maxDelay: WATCH_RECONNECT_MAX_MS }).next(),
    },
    grpcOptions: {
      'grpc.initial_reconnect_backoff_ms': 100,
      'grpc.max_reconnect_backoff_ms': 1000,
      // Two agents in one process (tests, demos) must not share one TCP connection.
      'grpc.use_local_subchannel_pool': 1,
      // etcd's default enforcement policy allows a ping every 5 s while a stream is open.
      'grpc.keepalive_time_ms': 10_000,
      'grpc.keepalive_timeout_ms': Math.max(1000, Math.min(opts.retryTimeoutMs, 5000)),
    },
  };
  if (opts.username !== undefined) {
    options.auth = { username: opts.username, password: opts.password ?? '', callOptions: deadline };
  }
  if (opts.cacert || opts.cert || opts.key) {
    options.credentials = {
      // grpc-js accepts null here and then trusts the system roots (a client cert without a CA file).
      rootCertificate: (opts.cacert ? readFileSync(opts.cacert) : null) as Buffer,
      ...(opts.key ? { privateKey: readFileSync(opts.key) } : {}),
      ...(opts.cert ? { certChain: readFileSync(opts.cert) } : {}),
    };
  }
  return options;
}
