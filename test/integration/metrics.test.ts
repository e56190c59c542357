import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { parseExposition, sample } from '../support/metrics';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

const METRICS_TOKEN = 'metrics-test-token';

describe('Prometheus metrics @integration', () => {
  let gw: TestGateway;
  let key: string;

  before(async () => {
    gw = await startTestGateway({ METRICS_TOKEN, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', TASK_POLL_MS: '20' });
    ({ key } = await gw.fundedAccount(1_000_000_000));
  });
  after(async () => gw.close());

  async function scrape(): Promise<Map<string, number>> {
    const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await res.text());
  }

  it('answers only with METRICS_TOKEN when it is set', async () => {
    expect((await fetch(`${gw.url}/metrics`)).status).to.equal(401);
    expect((await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).to.equal(401);
    const samples = await scrape();
    expect(sample(samples, 'process_cpu_seconds_total')).to.be.greaterThan(0);
    expect(sample(samples, 'gateway_db_pool_connections', { state: 'idle' }) + sample(samples, 'gateway_db_pool_connections', { state: 'in_use' })).to.be.greaterThan(0);
  });

  it('moves the HTTP, upstream, money and event-log series as a chat request flows', async () => {
    const before = await scrape();
    const balanceBefore = await gw.balance(key);
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const answer = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'count me [sim:tokens=20]' }], max_tokens: 64 });
    expect(answer.usage?.completion_tokens).to.equal(20);
    await expectSettledAndAuditClean(gw, [key]);
    const charged = balanceBefore.available - (await gw.balance(key)).available;
    expect(charged).to.be.greaterThan(0);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);

    const route = { method: 'POST', route: '/v1/chat/completions', status: '200' };
    expect(delta('gateway_http_requests_total', route)).to.equal(1);
    expect(delta('gateway_http_request_duration_seconds_count', route)).to.equal(1);
    expect(delta('gateway_http_request_duration_seconds_sum', route)).to.be.greaterThan(0);
    expect(delta('gateway_upstream_requests_total', { channel: 'default', model: 'chat-fast', outcome: 'ok' })).to.equal(1);
    expect(delta('gateway_upstream_response_seconds_count', { channel: 'default', model: 'chat-fast', outcome: 'ok' })).to.equal(1);
    // The reservation is the request's estimate; the settlement is exactly what the account paid.
    expect(delta('gateway_money_minor_units_total', { movement: 'reserved', model: 'chat-fast' })).to.be.at.least(charged);
    expect(delta('gateway_money_minor_units_total', { movement: 'settled', model: 'chat-fast' })).to.equal(charged);
    expect(delta('gateway_event_appends_total', { category: 'account', outcome: 'ok' })).to.be.at.least(2);
    expect(delta('gateway_event_append_seconds_count', { category: 'account' })).to.be.at.least(2);
    expect(sample(after, 'gateway_open_reservations')).to.equal(0);
    expect(sample(after, 'gateway_frozen_minor_units')).to.equal(0);
    expect([...after.keys()].some((k) => k.startsWith('gateway_consumer_lag_events{consumer="balances"}'))).to.equal(true);
  });

  it('labels by route template, never by the raw path, and counts unmatched paths as one series', async () => {
    const before = await scrape();
    for (const id of ['task_a', 'task_b', 'task_c']) expect((await gw.api(key, 'GET', `/v1/videos/generations/${id}`)).status).to.equal(404);
    expect((await gw.api(key, 'GET', '/v1/no/such/route')).status).to.equal(404);
    const after = await scrape();
    const delta = (labels: Record<string, string>) => sample(after, 'gateway_http_requests_total', labels) - sample(before, 'gateway_http_requests_total', labels);
    expect(delta({ method: 'GET', route: '/v1/videos/generations/:id', status: '404' })).to.equal(3);
    expect(delta({ method: 'GET', route: 'unmatched', status: '404' })).to.equal(1);
    expect([...after.keys()].some((k) => k.includes('task_a'))).to.equal(false);
  });

  it('counts the in-process caches: the key cache and the prompt token memory, entries, hits and misses', async () => {
    const before = await scrape();
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    // The same conversation twice: its one message is counted the first time, remembered the second.
    const messages = [{ role: 'user' as const, content: 'remember how long I am [sim:tokens=2]' }];
    for (let i = 0; i < 2; i++) await client.chat.completions.create({ model: 'chat-fast', messages });
    const after = await scrape();
    const delta = (name: string, cache: string) => sample(after, name, { cache }) - sample(before, name, { cache });
    expect(delta('gateway_cache_misses_total', 'prompt_tokens')).to.equal(1);
    expect(delta('gateway_cache_hits_total', 'prompt_tokens')).to.equal(1);
    expect(sample(after, 'gateway_cache_entries', { cache: 'prompt_tokens' })).to.be.at.least(1);
    // Two lookups of the key at least (a scrape is not one: /metrics takes its own token).
    expect(delta('gateway_cache_hits_total', 'api_keys') + delta('gateway_cache_misses_total', 'api_keys')).to.be.at.least(2);
    expect(sample(after, 'gateway_cache_entries', { cache: 'api_keys' })).to.be.at.least(1);
  });

  it('exposes every series the Grafana dashboard in docs/ queries', async () => {
    const dashboard = JSON.parse(readFileSync('docs/grafana-dashboard.json', 'utf8')) as { panels: { targets: { expr: string }[] }[] };
    const queried = new Set(dashboard.panels.flatMap((p) => p.targets.flatMap((t) => t.expr.match(/\b(?:gateway|process|nodejs)_[a-z0-9_]+/g) ?? [])));
    const res = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const declared = new Set([...(await res.text()).matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
    expect(queried.size).to.be.greaterThan(10);
    for (const name of queried) expect(declared.has(name.replace(/_(bucket|count|sum)$/, '')), name).to.equal(true);
  });

  it('counts job runs and webhook attempts as a video task finishes and calls back', async () => {
    const received: string[] = [];
    const receiver: Server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        received.push(req.url ?? '');
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const before = await scrape();
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const created = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'metrics' }], duration: 4, callback_url: url });
      expect(created.status).to.equal(200);
      await waitFor('the webhook', async () => received.length === 1);
      await expectSettledAndAuditClean(gw, [key]);
      const after = await waitFor('the delivery job to be counted', async () => {
        const samples = await scrape();
        return sample(samples, 'gateway_webhook_attempts_total', { outcome: 'delivered' }) > sample(before, 'gateway_webhook_attempts_total', { outcome: 'delivered' }) ? samples : null;
      });
      expect(sample(after, 'gateway_webhook_attempts_total', { outcome: 'delivered' }) - sample(before, 'gateway_webhook_attempts_total', { outcome: 'delivered' })).to.equal(1);
      expect(sample(after, 'gateway_job_runs_total', { outcome: 'done' }) - sample(before, 'gateway_job_runs_total', { outcome: 'done' })).to.be.at.least(1);
      expect(sample(after, 'gateway_money_minor_units_total', { movement: 'settled', model: 'video-ref-2.0' }) - sample(before, 'gateway_money_minor_units_total', { movement: 'settled', model: 'video-ref-2.0' })).to.be.greaterThan(0);
    } finally {
      receiver.closeAllConnections();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});
