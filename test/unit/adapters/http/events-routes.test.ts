import { expect } from 'chai';
import { connectionsDrained, isResponse, RawConnection } from './fuzz-kit.js';
import { startApi, type ApiHarness } from './support.js';

/** Reads SSE messages from `GET /events` until `count` data messages arrived; returns their parsed data and ids. */
async function readStream(url: string, count: number, headers: Record<string, string> = {}, during?: () => void): Promise<{ ids: string[]; events: any[]; contentType: string | null }> {
  const ac = new AbortController();
  const res = await fetch(`${url}/events`, { headers: { accept: 'text/event-stream', ...headers }, signal: ac.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const ids: string[] = [];
  const events: any[] = [];
  let called = false;
  while (events.length < count) {
    if (!called && during) {
      called = true;
      setTimeout(during, 10);
    }
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = text.indexOf('\n\n')) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (id && data) {
        ids.push(id);
        events.push(JSON.parse(data));
      }
    }
  }
  ac.abort();
  return { ids, events, contentType: res.headers.get('content-type') };
}

describe('REST API: GET /events', () => {
  let api: ApiHarness;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(() => api.close());

  it('streams the history, then live events, as Server-Sent Events', async () => {
    api.events.emit('leader_acquired', 'took the leader key');
    const got = await readStream(api.url, 2, {}, () => api.events.emit('role_changed', 'replica -> primary', { from: 'replica', to: 'primary' }));
    expect(got.contentType).to.match(/^text\/event-stream/);
    expect(got.events.map((e) => e.type)).to.deep.equal(['leader_acquired', 'role_changed']);
    expect(got.events[1]).to.deep.include({ member: 'node1', reason: 'replica -> primary', data: { from: 'replica', to: 'primary' } });
    expect(got.ids).to.deep.equal(got.events.map((e) => e.id));
  });

  it('resumes after Last-Event-ID (header or query) from the bounded history; an unknown id gets everything kept', async () => {
    const a = api.events.emit('paused', 'one');
    api.events.emit('resumed', 'two');
    api.events.emit('paused', 'three');
    const after = await readStream(api.url, 2, { 'last-event-id': a.id });
    expect(after.events.map((e) => e.reason)).to.deep.equal(['two', 'three']);
    const json = await api.request('GET', `/events?format=json&last_event_id=${encodeURIComponent(a.id)}`);
    expect(json.json.map((e: any) => e.reason)).to.deep.equal(['two', 'three']);
    const unknown = await api.request('GET', '/events?format=json', { headers: { 'last-event-id': 'zzz-1' } });
    expect(unknown.json.map((e: any) => e.reason)).to.deep.equal(['one', 'two', 'three']);
  });

  it('keeps at most the configured number of events', async () => {
    for (let i = 0; i < 60; i++) api.events.emit('config_changed', `change ${i}`);
    const json = await api.request('GET', '/events?format=json');
    expect(json.json).to.have.length(50);
    expect(json.json[0].reason).to.equal('change 10');
  });

  it('refuses unknown query parameters and formats (400)', async () => {
    const res = await api.request('GET', '/events?follow=1');
    expect(res.status).to.equal(400);
    expect(res.json.error).to.equal('invalid_query');
    expect((await api.request('GET', '/events?format=xml')).status).to.equal(400);
  });

  it('a stream whose request carried a body unsubscribes as soon as the client goes (the unread body hid it until a heartbeat)', async () => {
    const conn = await RawConnection.open(Number(new URL(api.url).port));
    const body = `{"x":"${'x'.repeat(200_000)}"}`;
    await conn.write(Buffer.from(`GET /events HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`));
    const res = await conn.next('GET', 2000);
    expect(isResponse(res) && res.stream).to.equal(true);
    expect(api.events.subscribers).to.equal(1);
    conn.destroy();
    expect(await connectionsDrained(api.server.server, 1000), 'the server closed its side').to.equal(true);
    expect(api.events.subscribers).to.equal(0);
  });

  it('a closed stream unsubscribes', async () => {
    await readStream(api.url, 1, {}, () => api.events.emit('paused', 'x'));
    await new Promise((r) => setTimeout(r, 50));
    expect(api.events.subscribers).to.equal(0);
  });
});
