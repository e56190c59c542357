import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

const VIDEO = 'https://cdn.example.com/clips/interview.mp4';

/** GET /v1/tasks: every kind in one list, newest first, filtered and paged, only the caller's account. */
describe('task list: GET /v1/tasks @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  let frozenAt: Date | null = null;
  const created: Record<string, string> = {};

  before(async () => {
    gw = await startTestGateway(
      { TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000' },
      { clock: () => frozenAt ?? new Date() },
    );
    ({ key, accountId } = await gw.fundedAccount(1_000_000_000));
    const make = async (kind: string, path: string, body: Record<string, unknown>) => {
      const res = await gw.api(key, 'POST', path, body);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      created[kind] = res.body.id;
    };
    await make('podcast', '/v1/audio/podcasts', { model: 'podcast-standard', text: 'a short talk about tides [sim:duration=1]' });
    await make('image', '/v1/images/async', { model: 'image-5.0', prompt: 'a lighthouse' });
    await make('erase', '/v1/videos/erase-subtitle', { video_url: `${VIDEO}?sim=duration=1`, duration_seconds: 5 });
    await make('video', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a kite over the sea' }] });
  });
  after(async () => {
    await expectSettledAndAuditClean(gw, [key]);
    await gw.close();
  });

  const list = (query = '', k = key) => gw.api(k, 'GET', `/v1/tasks${query}`);
  /** Every page of a query, following next_after. */
  async function allPages(query: string, limit: number): Promise<any[]> {
    const items: any[] = [];
    for (let after: string | null = null; ; ) {
      const sep = query ? '&' : '?';
      const res = await list(`${query}${sep}limit=${limit}${after ? `&after=${after}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.length).to.be.at.most(limit);
      items.push(...res.body.data);
      if (!res.body.has_more) {
        expect(res.body.next_after).to.equal(null);
        return items;
      }
      after = res.body.next_after;
    }
  }

  it('lists every kind newest first, with status, timings, billing and the kind’s own representation', async () => {
    const ids = Object.values(created);
    const res = await waitFor('all four tasks in the list', async () => {
      const r = await list();
      return r.body.data?.length === ids.length ? r : null;
    });
    expect(res.body).to.include({ object: 'list', has_more: false, next_after: null });
    const data = res.body.data as any[];
    expect(data.map((t) => t.id)).to.deep.equal([created.video, created.erase, created.image, created.podcast]);
    expect(data.map((t) => t.kind)).to.deep.equal(['video', 'erase', 'image', 'podcast']);
    for (const t of data) {
      expect(t).to.have.all.keys('object', 'id', 'kind', 'model', 'status', 'created_at', 'updated_at', 'finished_at', 'billing', 'error', 'detail');
      expect(t.object).to.equal('task');
      expect(Date.parse(t.created_at)).to.be.a('number').and.not.NaN;
      expect(t.billing.currency).to.equal('CNY');
      expect(t.billing.reserved).to.be.a('number').and.above(0);
      expect(t.detail.id).to.equal(t.id);
    }
    const dates = data.map((t) => Date.parse(t.created_at));
    expect([...dates].sort((a, b) => b - a)).to.deep.equal(dates);
    // The detail is what the kind's own status endpoint answers.
    const video = await gw.api(key, 'GET', `/v1/videos/generations/${created.video}`);
    expect(data[0].detail.object).to.equal(video.body.object);
    expect(data[0].detail.request).to.deep.equal(video.body.request);
  });

  it('shows a finished task with its settled cost and its result link', async () => {
    const done = await waitFor('the podcast billed', async () => {
      const r = await list('?kind=podcast');
      const t = r.body.data[0];
      return t?.status === 'succeeded' && t.billing.status === 'settled' ? t : null;
    });
    expect(done.finished_at).to.be.a('string');
    expect(Date.parse(done.finished_at)).to.be.at.least(Date.parse(done.created_at));
    expect(done.billing.amount).to.be.a('number').and.above(0).and.at.most(done.billing.reserved);
    expect(done.error).to.equal(null);
    expect(done.detail.audio_url).to.match(/\/files\/tasks\/podcast\/pod_[0-9a-f]+\/audio-[0-9a-f-]{36}\.wav\?expires=\d+&sig=[0-9a-f]{64}$/);
    const audio = await fetch(done.detail.audio_url);
    expect(audio.status).to.equal(200);
  });

  it('shows what was refunded of a task’s charge: nothing at first, then the refund', async () => {
    const done = await waitFor('the podcast billed', async () => {
      const t = (await list('?kind=podcast')).body.data[0];
      return t?.billing.status === 'settled' ? t : null;
    });
    expect(done.billing.refunded).to.equal(0);
    expect((await list('?kind=image')).body.data[0].billing.refunded).to.equal(0);
    const ledger = (await gw.api(key, 'GET', '/v1/account/ledger?type=settlement&limit=100')).body.data as { task_id: string | null; reservation_id: string }[];
    const settlement = ledger.find((e) => e.task_id === done.id)!;
    const refund = await gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, { reservation_id: settlement.reservation_id, amount: done.billing.amount, reference: `refund-${done.id}`, reason: 'test' });
    expect(refund.status, JSON.stringify(refund.body)).to.equal(201);
    const refunded = (await list('?kind=podcast')).body.data[0];
    expect(refunded.billing).to.deep.include({ status: 'settled', amount: done.billing.amount, refunded: done.billing.amount });
  });

  it('filters by kind and status (comma lists match any) and by creation time', async () => {
    const podcasts = (await list('?kind=podcast')).body.data as any[];
    expect(podcasts.map((t) => t.id)).to.deep.equal([created.podcast]);
    const two = (await list('?kind=image,podcast')).body.data as any[];
    expect(two.map((t) => t.id)).to.deep.equal([created.image, created.podcast]);
    expect((await list('?kind=minutes')).body.data).to.deep.equal([]);
    await waitFor('the podcast succeeded', async () => (await list('?kind=podcast&status=succeeded')).body.data.length === 1);
    const unfinished = (await list('?status=queued,running')).body.data as any[];
    expect(unfinished.every((t) => ['queued', 'running'].includes(t.status))).to.equal(true);
    expect(unfinished.map((t) => t.id)).to.not.include(created.podcast);
    const all = (await list()).body.data as any[];
    const newest = all[0];
    const since = (await list(`?from=${encodeURIComponent(newest.created_at)}`)).body.data as any[];
    expect(since.map((t) => t.id)).to.include(newest.id);
    expect(since.every((t) => Date.parse(t.created_at) >= Date.parse(newest.created_at))).to.equal(true);
    const before = (await list(`?to=${encodeURIComponent(newest.created_at)}`)).body.data as any[];
    expect(before.map((t) => t.id)).to.not.include(newest.id);
    expect(before.length + since.length).to.equal(all.length);
  });

  it('pages through tasks created in the same instant without skipping or repeating one', async () => {
    const { key: other } = await gw.fundedAccount(1_000_000_000);
    frozenAt = new Date();
    const ids: string[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const res = await gw.api(other, 'POST', '/v1/images/async', { model: 'image-5.0', prompt: `tile ${i}` });
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        ids.push(res.body.id);
      }
    } finally {
      frozenAt = null;
    }
    const full = await waitFor('five tasks listed', async () => {
      const r = await list('', other);
      return r.body.data?.length === 5 ? (r.body.data as any[]) : null;
    });
    expect(new Set(full.map((t) => t.created_at)).size).to.equal(1);
    expect([...full.map((t) => t.id)].sort()).to.deep.equal([...ids].sort());
    const paged: any[] = [];
    for (let after: string | null = null; ; ) {
      const res = await list(`?limit=2${after ? `&after=${after}` : ''}`, other);
      expect(res.status).to.equal(200);
      paged.push(...res.body.data);
      if (!res.body.has_more) break;
      after = res.body.next_after;
    }
    expect(paged.map((t) => t.id)).to.deep.equal(full.map((t) => t.id));
    await expectSettledAndAuditClean(gw, [other]);
  });

  it('pages the whole list one by one in the order of the whole list', async () => {
    const whole = (await list()).body.data.map((t: any) => t.id);
    expect((await allPages('', 1)).map((t) => t.id)).to.deep.equal(whole);
    expect((await allPages('?kind=image,podcast', 1)).map((t) => t.id)).to.deep.equal([created.image, created.podcast]);
  });

  it('shows only the caller’s account, and needs a key', async () => {
    const { key: stranger } = await gw.fundedAccount(0);
    expect((await list('', stranger)).body.data).to.deep.equal([]);
    const res = await gw.api(null, 'GET', '/v1/tasks');
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('invalid_api_key');
  });

  it('refuses bad filters and cursors with 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['?kind=bogus', 'kind'],
      ['?kind=video,', 'kind'],
      ['?kind=video&kind=image', 'kind'],
      ['?status=done', 'status'],
      ['?from=yesterday', 'from'],
      // RFC 3339's leap second, which a JavaScript Date cannot hold (it answered 500).
      ['?to=2026-06-30T23:59:60Z', 'to'],
      ['?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?after=not-a-cursor', 'after'],
      [`?after=${Buffer.from('task:1:x y').toString('base64url')}`, 'after'],
      ['?colour=blue', 'colour'],
    ];
    for (const [query, param] of cases) {
      const res = await list(query);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).to.equal(400);
      expect(res.body.error, query).to.include({ type: 'invalid_request_error', param });
    }
  });
});
