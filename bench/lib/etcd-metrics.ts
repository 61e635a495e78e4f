/** One sample of a Prometheus text exposition: metric name, labels, value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text exposition (comments and malformed lines skipped). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** GET `<endpoint>/metrics` of an etcd member. */
export async function scrapeEtcd(endpoint: string): Promise<Sample[]> {
  const res = await fetch(`${endpoint}/metrics`, { signal: AbortSignal.timeout(5000) });
  if (!res.ok) throw new Error(`etcd /metrics answered ${res.status}`);
  return parseExposition(await res.text());
}

/** Sum of the samples named `name` whose labels include every pair of `match`. */
export function total(samples: readonly Sample[], name: string, match: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}

/** What the benchmark reads from etcd: counters that say what its clients cost it. */
export interface EtcdCost {
  /** Raft proposals committed (every write: put, txn with a write, delete, lease grant/revoke). */
  readonly proposals: number;
  /** Range RPCs served (gRPC clients and the JSON gateway alike: the gateway calls the gRPC server). */
  readonly ranges: number;
  /** Reads of the MVCC store, counting the reads inside transactions' compares too. */
  readonly mvccRanges: number;
  /** Bytes of gRPC messages etcd sent to clients (the gateway is one such client). */
  readonly sentBytes: number;
  readonly receivedBytes: number;
  readonly txns: number;
  readonly puts: number;
  readonly deletes: number;
  readonly leaseGrants: number;
  readonly leaseTimeToLives: number;
  /** Keep-alive messages received on lease streams. */
  readonly keepAlives: number;
  /** Watch stream messages etcd received (creates, cancels, progress requests) and sent (events, notifications). */
  readonly watchReceived: number;
  readonly watchSent: number;
}

/** The cost counters of one scrape. */
export function etcdCost(samples: readonly Sample[]): EtcdCost {
  const handled = (method: string) => total(samples, 'grpc_server_handled_total', { grpc_method: method });
  return {
    proposals: total(samples, 'etcd_server_proposals_committed_total'),
    ranges: handled('Range'),
    mvccRanges: total(samples, 'etcd_debugging_mvcc_range_total'),
    sentBytes: total(samples, 'etcd_network_client_grpc_sent_bytes_total'),
    receivedBytes: total(samples, 'etcd_network_client_grpc_received_bytes_total'),
    txns: handled('Txn'),
    puts: handled('Put'),
    deletes: handled('DeleteRange'),
    leaseGrants: handled('LeaseGrant'),
    leaseTimeToLives: handled('LeaseTimeToLive'),
    keepAlives: total(samples, 'grpc_server_msg_received_total', { grpc_method: 'LeaseKeepAlive' }),
    watchReceived: total(samples, 'grpc_server_msg_received_total', { grpc_method: 'Watch' }),
    watchSent: total(samples, 'grpc_server_msg_sent_total', { grpc_method: 'Watch' }),
  };
}

/** Per-second rates between two scrapes `seconds` apart, divided by `per` (e.g. the number of clusters). */
export function costRates(before: EtcdCost, after: EtcdCost, seconds: number, per = 1): EtcdCost {
  const out: Record<string, number> = {};
  for (const k of Object.keys(before) as (keyof EtcdCost)[]) out[k] = (after[k] - before[k]) / seconds / per;
  return out as unknown as EtcdCost;
}
