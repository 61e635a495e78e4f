import { expect } from 'chai';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep, waitFor } from '../../scripts/lib/processes.js';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { nodeConfigPath, nodeYaml } from '../../scripts/lib/cluster-layout.js';
import { api, callbacksLog, candidateCaughtUp, disposeE2eCluster, e2eRunner, EventFollower, sql, suiteFailed, wardenctl, Writer } from './e2e-cluster.js';

/** The events of several members merged by time. */
function merged(followers: readonly EventFollower[]): any[] {
  return followers.flatMap((f) => f.events).sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
}

/** Index of the first event of `type` (from `member` when given) in `events`; -1 when absent. */
function at(events: readonly any[], type: string, member?: string): number {
  return events.findIndex((e) => e.type === type && (member === undefined || e.member === member));
}

/**
 * One real 3-node cluster (real etcd, three agents, three PostgreSQL 15 servers) driven
 * through the REST API and wardenctl. The steps run in order on the same cluster.
 */
describe('e2e: a real 3-node cluster', function () {
  this.timeout(180_000);
  let runner: ClusterRunner;
  let primary: string;

  const others = (name: string) => runner.layout.nodes.map((n) => n.name).filter((n) => n !== name);

  async function currentPrimary(timeoutMs = 60_000): Promise<string> {
    return runner.waitHealthy(timeoutMs);
  }

  async function writable(node: string): Promise<boolean> {
    try {
      const r = await sql(runner, node, 'SELECT pg_is_in_recovery() AS r');
      return r.rows[0].r === false;
    } catch {
      return false;
    }
  }

  before(async function () {
    this.timeout(240_000);
    runner = await e2eRunner();
    runner.prepare(true);
    await runner.startEtcd();
    for (const n of runner.layout.nodes) runner.startAgent(n.name);
    primary = await currentPrimary(180_000);
    await sql(runner, primary, 'CREATE TABLE IF NOT EXISTS e2e_writes (id bigint PRIMARY KEY, at timestamptz DEFAULT now())');
  });

  after(async function () {
    this.timeout(120_000);
    if (runner) await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('bootstraps one leader and two streaming replicas, and /cluster agrees with wardenctl list', async () => {
    const doc = (await api(runner, primary, 'GET', '/cluster')).body;
    const leaders = doc.members.filter((m: any) => m.role === 'leader');
    expect(leaders.map((m: any) => m.name)).to.deep.equal([primary]);
    expect(doc.members).to.have.length(3);
    const listed = JSON.parse(wardenctl(runner, 'list', '-f', 'json')) as any[];
    const listedLeader = listed.filter((r) => (r.Role ?? r.role) === 'Leader' || (r.Role ?? r.role) === 'leader');
    expect(listedLeader.map((r) => r.Member ?? r.member ?? r.name)).to.deep.equal([primary]);
    expect(listed).to.have.length(3);
  });

  it('switches over through the API: the candidate becomes primary, the old one follows, writes resume, /history gains a line', async () => {
    const before = (await api(runner, primary, 'GET', '/history')).body as unknown[];
    const candidate = others(primary)[0]!;
    const dry = await api(runner, primary, 'POST', '/switchover', { leader: primary, dry_run: true });
    expect(dry.status, JSON.stringify(dry.body)).to.equal(200);
    expect(dry.body.dry_run).to.equal(true);
    expect(others(primary)).to.include(dry.body.candidate);
    expect(dry.body.members).to.have.length(3);
    expect((await api(runner, primary, 'GET', '/cluster')).body.members.find((m: any) => m.role === 'leader').name).to.equal(primary);
    const followers = runner.layout.nodes.map((n) => new EventFollower(runner, n.name));
    const writer = new Writer(runner);
    writer.start();
    await candidateCaughtUp(runner, primary, candidate);
    await sleep(300);
    const t0 = Date.now();
    const r = await api(runner, primary, 'POST', '/switchover', { leader: primary, candidate });
    const answeredMs = Date.now() - t0;
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.message).to.contain(candidate);
    const newPrimary = await currentPrimary(60_000);
    await sleep(500);
    await writer.stop();
    console.log(`      switchover: API answered in ${answeredMs} ms, write gap ${writer.maxGapMs} ms (ttl ${runner.layout.dcs['ttl']}, loop_wait ${runner.layout.dcs['loop_wait']})`);
    expect(newPrimary).to.equal(candidate);
    expect(await writable(candidate)).to.equal(true);
    const after = (await api(runner, candidate, 'GET', '/history')).body as unknown[];
    expect(after.length).to.equal(before.length + 1);
    const stored = await sql(runner, candidate, 'SELECT count(*)::int AS n FROM e2e_writes WHERE id = ANY($1)', [writer.acknowledged]);
    expect(stored.rows[0].n).to.equal(writer.acknowledged.length);
    await waitFor('the old primary streaming again', 30_000, async () => ((await runner.nodeStatus(primary))?.role === 'replica' ? true : undefined));
    await sleep(1500);
    await Promise.all(followers.map((f) => f.stop()));
    const events = merged(followers).filter((e) => Date.parse(e.time) >= t0 - 1000);
    const order = [
      at(events, 'switchover_requested', primary),
      at(events, 'demote_started', primary),
      at(events, 'leader_lost', primary),
      at(events, 'leader_acquired', candidate),
      at(events, 'promote_started', candidate),
      at(events, 'promote_finished', candidate),
      at(events, 'switchover_completed', candidate),
    ];
    const seq = events.map((e) => `${e.member} ${e.type}`).join(', ');
    expect(order.every((i) => i >= 0), seq).to.equal(true);
    expect([...order].sort((x, y) => x - y), seq).to.deep.equal(order);
    const completed = events[order[6]!];
    expect(completed.data.duration_ms).to.be.within(1, 10_000);
    expect(events[order[5]!].data.duration_ms).to.be.within(0, completed.data.duration_ms);
    expect(events.find((e) => e.type === 'demote_finished' && e.member === primary)?.data.duration_ms).to.be.a('number');
    expect(events.some((e) => e.type === 'role_changed' && e.member === candidate && e.data.to === 'primary')).to.equal(true);
    expect(events.some((e) => e.type === 'role_changed' && e.member === primary && e.data.to === 'replica')).to.equal(true);
    console.log(`      switchover events: request to ${candidate} writable ${completed.data.duration_ms} ms, promote ${events[order[5]!].data.duration_ms} ms`);
    const calls = readFileSync(callbacksLog(runner), 'utf8');
    expect(calls).to.include(`${candidate} on_role_change primary e2e`);
    expect(calls).to.include(`${primary} on_role_change replica e2e`);
    const metrics = (await api(runner, candidate, 'GET', '/metrics')).body as string;
    expect(metrics).to.match(/svc_switchover_duration_seconds_count\{[^}]*\} 1/);
    const listed = wardenctl(runner, 'events', '--format', 'json').trim().split('\n').map((l) => JSON.parse(l));
    expect(listed.some((e) => e.type === 'switchover_completed' && e.member === candidate)).to.equal(true);
    primary = candidate;
  });

  it('switches over through wardenctl', async () => {
    const candidate = others(primary)[0]!;
    wardenctl(runner, 'switchover', '--leader', primary, '--candidate', candidate, '--force');
    expect(await currentPrimary(60_000)).to.equal(candidate);
    primary = candidate;
  });

  it('runs a scheduled switchover at its time, keeps it through a pause, and DELETE /switchover cancels one', async () => {
    const candidate = others(primary)[0]!;
    const far = new Date(Date.now() + 3600_000).toISOString();
    const r1 = await api(runner, primary, 'POST', '/switchover', { leader: primary, candidate, scheduled_at: far });
    expect(r1.status, JSON.stringify(r1.body)).to.equal(202);
    // Maintenance mode holds it (not run, not dropped) until the resume.
    wardenctl(runner, 'pause', '--wait');
    await sleep(2 * (runner.layout.dcs['loop_wait'] as number) * 1000 + 500);
    expect((await api(runner, primary, 'GET', '/cluster')).body.scheduled_switchover, 'kept while paused').to.deep.include({ at: far, from: primary, to: candidate });
    wardenctl(runner, 'resume', '--wait');
    expect((await api(runner, primary, 'DELETE', '/switchover')).status).to.equal(200);
    expect((await api(runner, primary, 'DELETE', '/switchover')).status).to.equal(404);

    const at = new Date(Date.now() + 4000).toISOString();
    const r2 = await api(runner, primary, 'POST', '/switchover', { leader: primary, candidate, scheduled_at: at });
    expect(r2.status, JSON.stringify(r2.body)).to.equal(202);
    expect(await currentPrimary(10_000)).to.equal(primary);
    await waitFor('the scheduled switchover', 60_000, async () => ((await runner.nodeStatus(candidate))?.role === 'primary' ? true : undefined));
    primary = await currentPrimary(60_000);
    expect(primary).to.equal(candidate);
  });

  it('fails over after kill -9 of the primary agent and postmaster; the old node rejoins as a replica', async () => {
    const victim = primary;
    const [a, b] = others(victim);
    const followers = [a!, b!].map((n) => new EventFollower(runner, n));
    await sleep(200);
    const killedAt = Date.now();
    runner.killNode(victim);
    const winner = await waitFor('a writable replica', 90_000, async () => ((await writable(a!)) ? a : (await writable(b!)) ? b : undefined), 50);
    const writableAt = Date.now();
    console.log(`      failover: kill -9 to writable ${writableAt - killedAt} ms (ttl ${runner.layout.dcs['ttl']})`);
    expect(writableAt - killedAt).to.be.lessThan(((runner.layout.dcs['ttl'] as number) + 10) * 1000);
    runner.startAgent(victim);
    primary = await currentPrimary(120_000);
    expect(primary).to.equal(winner);
    expect((await runner.nodeStatus(victim))?.role).to.equal('replica');
    await Promise.all(followers.map((f) => f.stop()));
    const events = merged(followers).filter((e) => Date.parse(e.time) >= killedAt);
    const seq = events.map((e) => `${e.member} ${e.type}`).join(', ');
    const done = events.find((e) => e.type === 'failover_completed' && e.member === winner);
    expect(done, seq).to.not.equal(undefined);
    expect(done.data.automatic).to.equal(true);
    expect(done.data.duration_ms).to.be.within(1, ((runner.layout.dcs['ttl'] as number) + 10) * 1000);
    expect(at(events, 'leader_acquired', winner), seq).to.be.below(at(events, 'promote_finished', winner));
    expect(at(events, 'promote_finished', winner), seq).to.be.below(at(events, 'failover_completed', winner));
    console.log(`      failover events: leader key gone to ${winner} writable ${done.data.duration_ms} ms`);
  });

  it('gives leadership back to a member tagged preferred once it is healthy and caught up', async () => {
    const preferred = others(primary)[0]!;
    const layout = runner.layout;
    const retag = async (tags: Record<string, unknown>) => {
      writeFileSync(nodeConfigPath(layout, preferred), nodeYaml(layout, runner.node(preferred), { tags }));
      expect((await api(runner, preferred, 'POST', '/reload')).status).to.equal(202);
    };
    expect((await api(runner, primary, 'PATCH', '/config', { preferred_leader_delay: 2 })).status).to.equal(200);
    const follower = new EventFollower(runner, primary);
    await retag({ preferred: true });
    await waitFor('the preferred member leading', 60_000, async () => ((await runner.nodeStatus(preferred))?.role === 'primary' ? true : undefined));
    await follower.stop();
    expect(follower.events.some((e) => e.type === 'preferred_leader_switchover' && e.data.candidate === preferred)).to.equal(true);
    await retag({});
    primary = await currentPrimary(60_000);
    expect(primary).to.equal(preferred);
  });

  it('applies db.parameters, db.pg_hba and db.pg_ident edited in a member\'s file on a reload, without restarting the agent or the server', async () => {
    const node = others(primary)[1]!;
    const layout = runner.layout;
    const write = (db: NonNullable<Parameters<typeof nodeYaml>[2]>['db']) => writeFileSync(nodeConfigPath(layout, node), nodeYaml(layout, runner.node(node), { db }));
    const reload = async (db: NonNullable<Parameters<typeof nodeYaml>[2]>['db']) => {
      write(db);
      expect((await api(runner, node, 'POST', '/reload')).status).to.equal(202);
    };
    const one = async (query: string) => (await sql(runner, node, query)).rows[0] ?? null;
    // The agent starts with a local value, which a reload then changes and takes out.
    write({ parameters: { work_mem: '3MB' } });
    await runner.stopAgent(node);
    runner.startAgent(node);
    await currentPrimary(120_000);
    expect((await one("SELECT setting FROM pg_settings WHERE name = 'work_mem'")).setting).to.equal('3072');
    const started = (await one('SELECT pg_postmaster_start_time()::text AS t')).t;
    const workMem = async () => (await one("SELECT setting FROM pg_settings WHERE name = 'work_mem'")).setting;
    const hbaRule = async () => (await one("SELECT address FROM pg_hba_file_rules WHERE 'e2e_app' = ANY(user_name)"))?.address ?? null;
    const identMap = async () => (await one("SELECT map_name FROM pg_ident_file_mappings WHERE pg_username = 'e2e_app'"))?.map_name ?? null;
    await reload({ parameters: { work_mem: '5MB' }, pg_hba: ['host all e2e_app 10.9.0.0/16 reject'] });
    await waitFor('work_mem 5MB and the pg_hba line', 20_000, async () => ((await workMem()) === '5120' && (await hbaRule()) === '10.9.0.0' ? true : undefined));
    // A local value present since the last reload changed again: the file's new value wins, not the one it had before.
    await reload({ parameters: { work_mem: '6MB' }, pg_ident: ['e2e_map alice e2e_app'] });
    await waitFor('work_mem 6MB, the pg_ident map, the pg_hba line gone', 20_000, async () =>
      (await workMem()) === '6144' && (await identMap()) === 'e2e_map' && (await hbaRule()) === null ? true : undefined,
    );
    await reload({});
    await waitFor('work_mem back to the default', 20_000, async () => ((await workMem()) === '4096' ? true : undefined));
    expect((await one('SELECT pg_postmaster_start_time()::text AS t')).t, 'the server was reloaded, not restarted').to.equal(started);
  });

  it('shows the cluster live in a browser: three members and the leader, then a switchover within 2 s', async () => {
    const { launchBrowser } = await import('../support/browser.js');
    const b = await launchBrowser();
    try {
      const page = await (await b.browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
      await page.goto(`${runner.apiUrl(others(primary)[0]!)}/ui`);
      await page.waitForSelector(`tr[data-member="${primary}"][data-role="leader"]`, { timeout: 10_000 });
      expect(await page.locator('#members tr').count()).to.equal(3);
      const candidate = others(primary)[1]!;
      const r = await api(runner, primary, 'POST', '/switchover', { leader: primary, candidate });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const answered = Date.now();
      await page.waitForSelector(`tr[data-member="${candidate}"][data-role="leader"]`, { timeout: 2000 });
      await page.waitForSelector('#events div[data-type="switchover_requested"]', { timeout: Math.max(1, 2000 - (Date.now() - answered)) });
      await page.waitForSelector('#events div[data-type="switchover_completed"]', { timeout: Math.max(1, 2000 - (Date.now() - answered)) });
      console.log(`      status page: new leader and switchover events shown ${Date.now() - answered} ms after the API answered`);
      expect(await page.textContent('#leader-name')).to.equal(candidate);
      await sleep(1500);
      mkdirSync('test-artifacts', { recursive: true });
      await page.screenshot({ path: 'test-artifacts/status-page.png', fullPage: true });
      if (process.env['WARDEN_UPDATE_DOCS_SCREENSHOT']) copyFileSync('test-artifacts/status-page.png', 'docs/status-page.png');
      primary = candidate;
      await waitFor('the old primary streaming again', 30_000, async () => ((await runner.nodeStatus(others(candidate)[0]!))?.state === 'running' ? true : undefined));
    } finally {
      await b.close();
    }
  });

  it('does not fail over in pause when the primary postmaster dies; resume restores automation', async () => {
    wardenctl(runner, 'pause', '--wait');
    const pm = runner.postmasterPid(primary)!;
    process.kill(pm, 'SIGKILL');
    await sleep(((runner.layout.dcs['ttl'] as number) + 3) * 1000);
    for (const n of others(primary)) expect(await writable(n), `${n} must not be promoted in pause`).to.equal(false);
    wardenctl(runner, 'resume', '--wait');
    primary = await currentPrimary(120_000);
    expect(await writable(primary)).to.equal(true);
  });

  it('in pause, stopping the primary agent leaves PostgreSQL running under its fencer: a restarted agent takes it over without a restart, and without one the fencer stops it before the lock runs out', async () => {
    wardenctl(runner, 'pause', '--wait');
    const pm = runner.postmasterPid(primary)!;
    const fencer = runner.fencerPid(primary)!;
    const leaderSeenBy = async (n: string) => (await api(runner, n, 'GET', '/cluster')).body.members.find((m: any) => m.role === 'leader')?.name;
    const writer = new Writer(runner, 20);
    writer.start();
    await sleep(500);
    await runner.terminateAgent(primary);
    expect(runner.postmasterPid(primary), 'the same postmaster runs on').to.equal(pm);
    expect(runner.fencerPid(primary), 'the fencer stays').to.equal(fencer);
    expect(await writable(primary)).to.equal(true);
    expect(await leaderSeenBy(others(primary)[0]!), 'the leader key stays').to.equal(primary);
    await sql(runner, primary, 'INSERT INTO e2e_writes (id) VALUES (-101)');
    runner.startAgent(primary);
    await waitFor(`${primary}'s new agent holding the lock`, 30_000, async () => {
      const n = await runner.nodeStatus(primary);
      return n?.role === 'primary' && (await api(runner, primary, 'GET', '/primary')).status === 200 ? true : undefined;
    });
    await sleep(500);
    await writer.stop();
    console.log(`      pause: the primary's agent restarted; longest write gap ${writer.maxGapMs} ms, writes stopped at most ${writer.maxStoppedMs} ms (${writer.acknowledged.length} writes)`);
    // A commit that takes long on a busy machine is not a stop: no write refused for this long.
    expect(writer.maxStoppedMs, 'writes go on while the agent restarts').to.be.below(1000);
    expect(runner.postmasterPid(primary), 'taken over without a restart').to.equal(pm);
    expect(runner.fencerPid(primary), 'the running fencer is adopted').to.equal(fencer);
    // Long after the old lock would have run out: the new agent renews it.
    await sleep(((runner.layout.dcs['ttl'] as number) + 2) * 1000);
    expect(runner.postmasterPid(primary)).to.equal(pm);
    expect(await leaderSeenBy(others(primary)[0]!)).to.equal(primary);

    // Not started again, and a manual failover asked meanwhile (allowed in pause): the candidate
    // is promoted only once the old primary is stopped, never beside it.
    const stoppedAt = Date.now();
    await runner.terminateAgent(primary);
    const candidate = others(primary)[0]!;
    // The request waits for its outcome: watched meanwhile.
    const asking = api(runner, candidate, 'POST', '/failover', { candidate });
    let oldGoneAt: number | null = null;
    let candidateWritableAt: number | null = null;
    let overlapMs = 0;
    while (candidateWritableAt === null && Date.now() - stoppedAt < 60_000) {
      const oldRuns = runner.postmasterPid(primary) !== undefined;
      const candidateWrites = await writable(candidate);
      if (!oldRuns) oldGoneAt ??= Date.now();
      if (candidateWrites) {
        candidateWritableAt = Date.now();
        if (oldRuns) overlapMs = 1;
      }
      await sleep(50);
    }
    // It waits for the old leader's lock to run out (ttl), about as long as the request waits: its
    // outcome may then be unknown to it, with the lock still held or just run out.
    const asked = await asking;
    expect(asked.status, JSON.stringify(asked.body)).to.be.oneOf([200, 503]);
    if (asked.status === 503) expect(asked.body.message).to.match(new RegExp(`${primary} still holds the leader lock|the leader lock has run out and no member holds it yet`));
    console.log(`      pause: agent stopped; its fencer stopped the primary after ${oldGoneAt! - stoppedAt} ms (ttl ${runner.layout.dcs['ttl']} s); the manual failover's candidate writable after ${candidateWritableAt! - stoppedAt} ms`);
    expect(oldGoneAt! - stoppedAt).to.be.lessThan((runner.layout.dcs['ttl'] as number) * 1000);
    expect(candidateWritableAt, 'the candidate promoted').to.not.equal(null);
    expect(overlapMs, 'never two writable servers').to.equal(0);
    expect(candidateWritableAt!).to.be.at.least(oldGoneAt!);
    wardenctl(runner, 'resume', '--wait');
    runner.startAgent(primary);
    primary = await currentPrimary(120_000);
    expect(primary).to.equal(candidate);
    const kept = await sql(runner, primary, 'SELECT count(*)::int AS n FROM e2e_writes WHERE id = -101');
    expect(kept.rows[0].n).to.equal(1);
  });

  it('shows pending_restart on every node after a restart-needing PATCH /config; wardenctl restart --pending clears it', async () => {
    const r = await api(runner, primary, 'PATCH', '/config', { db: { parameters: { max_connections: 120 } } });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    for (const n of runner.layout.nodes) {
      await waitFor(`${n.name} pending_restart`, 30_000, async () => ((await runner.nodeStatus(n.name))?.['pending_restart'] === true ? true : undefined));
    }
    wardenctl(runner, 'restart', '--pending', '--force');
    for (const n of runner.layout.nodes) {
      await waitFor(`${n.name} restarted`, 60_000, async () => ((await runner.nodeStatus(n.name))?.['pending_restart'] === undefined ? true : undefined));
    }
    primary = await currentPrimary(60_000);
    const mc = await sql(runner, primary, 'SHOW max_connections');
    expect(mc.rows[0].max_connections).to.equal('120');
  });

  it('restarts with conditions and reinitializes a replica', async () => {
    const replica = others(primary)[0]!;
    const refused = await api(runner, replica, 'POST', '/restart', { role: 'primary' });
    expect(refused.status).to.equal(503);
    const done = await api(runner, replica, 'POST', '/restart', { role: 'replica' });
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    expect((await api(runner, primary, 'POST', '/reinitialize', {})).status).to.equal(503);
    const startedBefore = (await runner.nodeStatus(replica))?.['postmaster_start_time'];
    const re = await api(runner, replica, 'POST', '/reinitialize', { force: true });
    expect(re.status, JSON.stringify(re.body)).to.equal(200);
    // The reinitialize runs in the background: wait for the new copy to stream, not for the old server's last status.
    await waitFor(`${replica} reinitialized and streaming`, 120_000, async () => {
      const s = await runner.nodeStatus(replica);
      return s?.state === 'running' && s.replication_state === 'streaming' && s['postmaster_start_time'] !== startedBefore ? true : undefined;
    });
    await currentPrimary(120_000);
  });

  it('loses no acknowledged write in synchronous mode across a switchover and a kill -9 failover', async () => {
    const r = await api(runner, primary, 'PATCH', '/config', { synchronous_mode: true });
    expect(r.status).to.equal(200);
    const syncName = await waitFor('a sync standby', 60_000, async () => {
      for (const n of others(primary)) if ((await runner.nodeStatus(n))?.['sync_standby'] === true) return n;
      return undefined;
    });
    const writer = new Writer(runner, 5);
    writer.start();
    await sleep(1000);
    const sw = await api(runner, primary, 'POST', '/switchover', { leader: primary, candidate: syncName });
    expect(sw.status, JSON.stringify(sw.body)).to.equal(200);
    primary = await currentPrimary(60_000);
    await waitFor('a sync standby after switchover', 60_000, async () => {
      for (const n of others(primary)) if ((await runner.nodeStatus(n))?.['sync_standby'] === true) return n;
      return undefined;
    });
    await sleep(1000);
    const victim = primary;
    runner.killNode(victim);
    const survivors = others(victim);
    await waitFor('a new primary', 90_000, async () => {
      for (const n of survivors) if (await writable(n)) return n;
      return undefined;
    }, 100);
    await sleep(1000);
    await writer.stop();
    const newPrimary = (await Promise.all(survivors.map(async (n) => ((await writable(n)) ? n : undefined)))).find(Boolean)!;
    const stored = await sql(runner, newPrimary, 'SELECT id FROM e2e_writes WHERE id = ANY($1)', [writer.acknowledged]);
    console.log(`      synchronous mode: ${writer.acknowledged.length} acknowledged writes, ${stored.rowCount} present after switchover + failover`);
    expect(writer.acknowledged.length, 'writes were acknowledged').to.be.greaterThan(0);
    expect(stored.rowCount).to.equal(writer.acknowledged.length);
    runner.startAgent(victim);
    primary = await currentPrimary(120_000);
    expect((await api(runner, primary, 'PATCH', '/config', { synchronous_mode: false })).status).to.equal(200);
  });

  it('demotes the primary when etcd is down longer than ttl without failsafe, and recovers when etcd is back', async () => {
    const ttl = runner.layout.dcs['ttl'] as number;
    await runner.stopEtcd();
    await sleep((ttl + 5) * 1000);
    for (const n of runner.layout.nodes) expect(await writable(n.name), `${n.name} must not be writable without the DCS`).to.equal(false);
    await runner.startEtcd();
    primary = await currentPrimary(120_000);
    expect(await writable(primary)).to.equal(true);
  });

  it('keeps the primary running with failsafe_mode while every member answers, and recovers after etcd returns', async () => {
    const ttl = runner.layout.dcs['ttl'] as number;
    expect((await api(runner, primary, 'PATCH', '/config', { failsafe_mode: true })).status).to.equal(200);
    await sleep(3000);
    await runner.stopEtcd();
    await sleep((ttl + 5) * 1000);
    expect(await writable(primary), 'failsafe keeps the primary').to.equal(true);
    expect((await runner.nodeStatus(primary))?.['failsafe_mode_is_active']).to.equal(true);
    await runner.startEtcd();
    primary = await currentPrimary(120_000);
    expect((await api(runner, primary, 'PATCH', '/config', { failsafe_mode: false })).status).to.equal(200);
  });
});
