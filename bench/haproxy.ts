/**
 * What clients see of a switchover through HAProxy: a real haproxy (Debian's /usr/sbin/haproxy,
 * started by PID on free loopback ports) runs the handbook's example configuration
 * (docs/load-balancing.md, adapted only in addresses, TLS of the checks and a stats socket) in
 * front of a real 3-node cluster. A client inserts a row every 20 ms through the proxy's write
 * port (reconnecting after any error, as an application would), while the stats socket is
 * sampled every 10 ms. For each switchover: the longest time without a successful write, when
 * writes resumed after the API answered, and how long the primary backend showed two servers UP.
 *
 * `--default-server "..."` replaces the example's `default-server` timings (to try settings
 * before printing them in the handbook); the table says so.
 *
 *   node --import tsx bench/haproxy.ts [--runs 5] [--default-server "inter 1s fall 2 rise 2 ..."]
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { sleep, waitFor } from '../scripts/lib/processes.js';
import { api, sql } from '../test/e2e/e2e-cluster.js';
import { DEMO_DCS, othersOf, startBenchCluster } from './lib/bench-cluster.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { HAPROXY_BIN, HaproxyProcess, ProxyClient, StatsSampler, handbookExample } from '../test/support/haproxy.js';
import { atMost, printRuns, printTable, progress } from './lib/report.js';
import { max, median } from './lib/stats.js';
import { CREATE_WRITES_TABLE, WRITES_TABLE, wallNow } from './lib/switch-writer.js';
import { firstMatch, pgLog, wardenLogFiles } from './lib/log-timeline.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, 'default-server': { type: 'string' } } });
const runs = Number(values.runs);

await runBenchmark(async () => {
  if (!existsSync(HAPROXY_BIN)) {
    progress(`${HAPROXY_BIN} is not installed (apt-get install haproxy): nothing to measure`);
    return;
  }
  const handbook = handbookExample();
  const override = values['default-server'];
  const example = override ? handbook.replace(/default-server [^\n]*?( check-ssl[^\n]*)?\n/g, `default-server ${override}$1\n`) : handbook;
  const settings = `${/default-server ([^\n]*)/.exec(example)?.[1]?.replace(/ check-ssl.*$/, '') ?? '?'}${override ? ' (not the handbook\'s)' : ' (the handbook\'s)'}`;
  const { runner, primary: first } = await startBenchCluster(DEMO_DCS);
  await sql(runner, first, CREATE_WRITES_TABLE);
  const proxy = await HaproxyProcess.start(runner, example);
  onCleanup(() => proxy.stop());
  progress(`haproxy ${proxy.pid} on 127.0.0.1:${proxy.primaryPort} (writes) / :${proxy.replicaPort} (reads), default-server ${settings}; config ${proxy.configFile}`);
  const sampler = new StatsSampler(proxy);
  sampler.start();
  onCleanup(() => sampler.stop());
  const client = new ProxyClient(proxy.primaryPort, `INSERT INTO ${WRITES_TABLE}(id, node) VALUES ($1, 'proxy')`);
  client.start();
  onCleanup(() => client.stop());
  const partner = othersOf(runner, first)[0]!;
  const lines: (string | number)[][] = [];
  const gaps: number[] = [];
  const resume: number[] = [];
  const twoUp: number[] = [];
  for (let i = 0; i < runs; i++) {
    const primary = await runner.waitHealthy(180_000);
    await waitFor('haproxy to route writes to the primary alone', 60_000, async () => (sampler.latest.length === 1 && sampler.latest[0] === primary ? true : undefined), 50);
    await waitFor('the client to write through the proxy', 30_000, async () => (client.successes.some((t) => t > wallNow() - 200) ? true : undefined), 50);
    await sleep(1000);
    const candidate = primary === first ? partner : first;
    const t0 = wallNow();
    const r = await api(runner, primary, 'POST', '/switchover', { leader: primary, candidate });
    const answered = wallNow();
    if (r.status !== 200) throw new Error(`switchover ${i + 1} ${primary} -> ${candidate}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    await waitFor('writes through the proxy to resume', 60_000, async () => (client.successes.filter((t) => t > answered).length >= 25 ? true : undefined), 50);
    const end = wallNow();
    const lastBefore = client.successes.filter((t) => t <= answered).at(-1) ?? t0;
    const resumed = client.successes.find((t) => t > lastBefore + 1 && t >= t0) ?? Number.NaN;
    const gap = client.longestGap(t0 - 1000, end);
    const both = sampler.twoUpMs(t0 - 1000, end);
    const oldDown = sampler.first(t0, (up) => !up.includes(primary));
    const newUp = sampler.first(t0, (up) => up.includes(candidate));
    // The servers' own view (PostgreSQL's logs): the old primary stops taking writes, the new one starts.
    await sleep(300);
    const logs = wardenLogFiles(runner);
    const stopAsked = firstMatch(pgLog(logs.postgres(primary), t0 - 5, wallNow()), /received fast shutdown request/, t0);
    const writable = firstMatch(pgLog(logs.postgres(candidate), t0 - 5, wallNow()), /archive recovery complete/, t0);
    gaps.push(gap);
    resume.push(resumed - answered);
    twoUp.push(both);
    const since = (t: number | undefined) => (t === undefined ? Number.NaN : t - t0);
    lines.push([i + 1, `${primary} -> ${candidate}`, answered - t0, gap, resumed - answered, since(oldDown), since(stopAsked), since(writable), since(newUp), both]);
    progress(`switchover ${i + 1}/${runs} ${primary} -> ${candidate}: answered in ${(answered - t0).toFixed(0)} ms, longest time without a write ${gap.toFixed(0)} ms, two servers UP for ${both.toFixed(0)} ms`);
  }
  await client.stop();
  await sampler.stop();
  const stored = await sql(runner, await runner.waitHealthy(60_000), `SELECT count(*)::int AS n FROM ${WRITES_TABLE} WHERE id = ANY($1)`, [client.acknowledged]);
  printRuns(
    `haproxy: one line per switchover (ms after POST /switchover unless said); default-server ${settings}`,
    ['run', 'from -> to', 'API answer', 'longest without a write', 'writes resume after the answer', 'old marked DOWN', 'old stops (PG)', 'new writable (PG)', 'new marked UP', 'two servers UP'],
    lines,
  );
  printTable(`switchover through HAProxy (handbook example, client inserting every 20 ms through the proxy, ${runs} switchovers; stats sampled every 10 ms)`, [
    { figure: 'longest time without a successful write, median', value: median(gaps), unit: 'ms', goal: atMost(1000), note: `default-server ${settings}` },
    { figure: 'longest time without a successful write, max', value: max(gaps), unit: 'ms', goal: atMost(1000) },
    { figure: 'writes resume after the API answered, median', value: median(resume), unit: 'ms' },
    { figure: 'switchovers with two servers UP in the primary backend', value: twoUp.filter((x) => x > 0).length, unit: '', goal: atMost(0), note: `of ${runs}` },
    { figure: 'two servers UP, longest', value: max(twoUp), unit: 'ms', goal: atMost(0) },
    { figure: 'acknowledged writes lost', value: client.acknowledged.length - stored.rows[0].n, unit: '', goal: atMost(0), note: `${client.acknowledged.length} acknowledged through the proxy` },
  ]);
});
