import { expect } from 'chai';
import { ClusterKey } from '../../src/adapters/cluster-store/keys.js';
import { SystemClock } from '../../src/adapters/clock/system-clock.js';
import { STATUS_PAGE_HTML } from '../../src/adapters/http/status-page-html.js';
import { launchBrowser } from '../support/browser.js';
import { clusterView, memberJson, primaryFacts, snapshot, startApi, type ApiHarness } from '../unit/adapters/http/support.js';

/** The status page in a real browser (headless Chromium) against an agent API over fakes: access control and a sub-path. */
describe('status page: access control and reverse-proxy paths, in Chromium', function () {
  this.timeout(60_000);
  let api: ApiHarness;
  let b: Awaited<ReturnType<typeof launchBrowser>>;
  before(async () => {
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
  });
  afterEach(() => api?.close());

  async function start(auth: boolean): Promise<void> {
    api = await startApi({
      clock: new SystemClock(),
      ...(auth ? { access: { authentication: { username: 'admin', password: 's3cret' } } } : {}),
      prefill: { [ClusterKey.leader]: 'node1', [ClusterKey.member('node1')]: memberJson('node1', { role: 'primary', xlog_location: 1000 }) },
      snapshot: snapshot({ facts: primaryFacts(), leader: true, cluster: clusterView({ leader: 'node1' }) }),
    });
  }

  it('is small and needs nothing from the network', () => {
    expect(Buffer.byteLength(STATUS_PAGE_HTML)).to.be.below(100 * 1024);
    expect(STATUS_PAGE_HTML).not.to.match(/https?:\/\//);
  });

  it('with the agent\'s authentication on, the browser is asked for credentials; with them the page renders', async () => {
    await start(true);
    const anonymous = await b.browser.newContext();
    const p = await anonymous.newPage();
    // Headless Chromium has no dialog to show: it answers the challenge with no credentials and the navigation fails.
    const challenged = p.waitForEvent('response', (r) => r.url().endsWith('/ui'));
    const nav = await p.goto(`${api.url}/ui`).catch((e: Error) => e);
    const res = await challenged;
    expect(res.status()).to.equal(401);
    expect(res.headers()['www-authenticate']).to.equal('Basic realm="svc"');
    expect(nav instanceof Error ? nav.message : '').to.include('ERR_INVALID_AUTH_CREDENTIALS');
    await anonymous.close();
    const ctx = await b.browser.newContext({ httpCredentials: { username: 'admin', password: 's3cret' } });
    const page = await ctx.newPage();
    expect((await page.goto(`${api.url}/ui`))!.status()).to.equal(200);
    await page.waitForSelector('tr[data-member="node1"][data-role="leader"]', { timeout: 5000 });
    expect(await page.textContent('#leader-name')).to.equal('node1');
    await ctx.close();
  });

  it('works behind a reverse proxy on a sub-path (its requests are relative)', async () => {
    await start(false);
    const ctx = await b.browser.newContext();
    const page = await ctx.newPage();
    const asked: string[] = [];
    // The "proxy": /warden/... is served by the agent's /...
    await page.route('http://proxy.invalid/warden/**', async (route) => {
      const path = new URL(route.request().url()).pathname.replace(/^\/warden/, '');
      asked.push(path);
      const r = await fetch(`${api.url}${path}`);
      await route.fulfill({ status: r.status, headers: Object.fromEntries(r.headers), body: Buffer.from(await r.arrayBuffer()) });
    });
    await page.route('http://proxy.invalid/events', (route) => route.abort());
    await page.goto('http://proxy.invalid/warden/ui');
    await page.waitForSelector('tr[data-member="node1"][data-role="leader"]', { timeout: 5000 });
    expect(asked).to.include('/ui/data');
    await ctx.close();
  });
});
