/**
 * Throughput of the agent's health path: serves the REST API over a fake primary snapshot
 * and drives `GET /primary` with autocannon in a separate process (so the load generator
 * does not share the server's event loop). Prints req/s and latency percentiles.
 *
 *   npx tsx bench/agent-api.ts [--connections 16] [--duration 10] [--path /primary]
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import { primaryFacts, snapshot, startApi } from '../test/unit/adapters/http/support.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '16' },
    duration: { type: 'string', default: '10' },
    path: { type: 'string', default: '/primary' },
  },
});

const api = await startApi({ snapshot: snapshot({ facts: primaryFacts(), leader: true }) });
// The virtual test clock stays at the snapshot's time, so the leader lock never expires mid-run.
const bin = join(dirname(createRequire(import.meta.url).resolve('autocannon/package.json')), 'autocannon.js');
const args = [bin, '-c', values.connections!, '-d', values.duration!, '-j', `${api.url}${values.path}`];
try {
  // Warm-up (JIT, connection setup), then the measured run.
  await promisify(execFile)(process.execPath, [bin, '-c', values.connections!, '-d', '2', '-j', `${api.url}${values.path}`]);
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  const r = JSON.parse(stdout) as {
    requests: { average: number; total: number };
    latency: { p50: number; p90: number; p99: number; max: number; average: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  };
  console.log(
    JSON.stringify(
      {
        path: values.path,
        connections: Number(values.connections),
        durationSeconds: Number(values.duration),
        reqPerSecAvg: Math.round(r.requests.average),
        total: r.requests.total,
        latencyMs: { avg: r.latency.average, p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99, max: r.latency.max },
        errors: r.errors,
        timeouts: r.timeouts,
        non2xx: r.non2xx,
      },
      null,
      2,
    ),
  );
} finally {
  await api.close();
}
