import fs from 'node:fs';
import Ajv2020 from 'ajv/dist/2020';
import { expect } from 'chai';
import OpenAI from 'openai';
import { allProjections } from '../../projections';
import { toCsv } from '../../src/accounts/csv';
import { runAudit } from '../../src/audit/audit';
import { READ_MODEL_SCHEMA } from '../../src/projections-runtime/consumer';
import { rebuildProjections } from '../../src/projections-runtime/rebuild';
import { CHECKED_IN_PATH } from '../../src/openapi/write';
import { startTestGateway, TEST_ADMIN_TOKEN, type TestGateway } from '../support/gateway';
import { units } from '../support/pricing';
import { column, readAsSpreadsheet } from '../support/spreadsheet-csv';
import { expectSettledAndAuditClean, WAIT_LIMIT_MS } from '../support/wait';

interface Line {
  reservation_id: string;
  reserved_at: string;
  account_id: string;
  account_name: string | null;
  key_id: string | null;
  key_name: string | null;
  model: string;
  endpoint: string;
  channel?: string | null;
  units: Record<string, number> | null;
  reserved: number;
  amount: number | null;
  refunded: number;
  outcome: string;
  reason: string | null;
  request_id: string | null;
  task_id: string | null;
}

interface KeyListing {
  id: string;
  name: string | null;
  prefix: string;
  status: string;
  account_id: string;
  account_name: string | null;
  spent: number;
  last_used_at: string | null;
}

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_after: string | null;
}

const documented: { components: { schemas: Record<string, object> } } = JSON.parse(fs.readFileSync(CHECKED_IN_PATH, 'utf8'));
const ajv = new Ajv2020({ strict: false });
for (const [name, schema] of Object.entries(documented.components.schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);

/** The request log and the operator's key search over real HTTP, against the ledger, the audit and the OpenAPI document. */
describe('the request log and the search of every key @integration', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  let accountId: string;
  let key: string;
  let keyId: string;
  /** A key name a spreadsheet would run as a formula, were it not escaped. */
  const hostileName = '=HYPERLINK("http://x");evil';
  /** A client request id that a spreadsheet would compute (`-2-3`), were it not escaped. */
  const hostileRequestId = '-2-3.hostile';
  let chatRequestId: string;
  let failedRequestId: string;
  let videoTaskId: string;

  before(async () => {
    gw = await startTestGateway({ TASK_POLL_MS: '20', RATE_LIMIT_PER_MINUTE: '100000' });
    const account = await gw.admin('POST', '/admin/v1/accounts', { name: 'Request log Ltd' });
    accountId = account.body.id;
    await gw.admin('POST', `/admin/v1/accounts/${accountId}/credits`, { amount: 1_000_000_000, reference: 'fund' });
    const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: hostileName });
    key = issued.body.key;
    keyId = issued.body.id;
  });
  after(async () => gw.close());

  const admin = async <T>(path: string): Promise<T> => {
    const res = await gw.admin('GET', path);
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).to.equal(200);
    return res.body as T;
  };
  const linesOf = async (query: string): Promise<Line[]> => (await admin<Page<Line>>(`/admin/v1/requests?account_id=${accountId}&limit=100${query}`)).data;
  const lineOf = async (reservationOrRef: (l: Line) => boolean): Promise<Line> => {
    const found = (await linesOf('')).find(reservationOrRef);
    expect(found, 'the line').to.not.equal(undefined);
    return found!;
  };
  const csvOf = async (path: string, headers: Record<string, string> = {}): Promise<string> => {
    const res = await gw.api(TEST_ADMIN_TOKEN, 'GET', path, undefined, headers);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    return res.body as string;
  };

  it('shows a settled chat call with its key, channel, units and amount, as the ledger charged it', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { response } = await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: 'hi [sim:tokens=5]' }] }, { headers: { 'x-request-id': hostileRequestId } }).withResponse();
    chatRequestId = response.headers.get('x-request-id')!;
    expect(chatRequestId).to.equal(hostileRequestId);
    await expectSettledAndAuditClean(gw, [key]);
    const line = await lineOf((l) => l.request_id === chatRequestId);
    const ledger = await gw.api(key, 'GET', '/v1/account/ledger?type=settlement&limit=100');
    const settlement = (ledger.body.data as { reservation_id: string; amount: number; request_id: string }[]).find((e) => e.request_id === chatRequestId)!;
    expect(line).to.deep.include({
      reservation_id: settlement.reservation_id,
      account_id: accountId,
      account_name: 'Request log Ltd',
      key_id: keyId,
      key_name: hostileName,
      model: 'chat-fast',
      endpoint: 'POST /v1/chat/completions',
      channel: 'default',
      amount: settlement.amount,
      refunded: 0,
      outcome: 'settled',
      task_id: null,
    });
    expect(line.units).to.have.keys(['input_tokens', 'output_tokens']);
    expect(line.units!.output_tokens).to.equal(5);
    expect(ajv.validate({ $ref: '#/components/schemas/RequestLogPage' }, await admin(`/admin/v1/requests?account_id=${accountId}`)), ajv.errorsText()).to.equal(true);
  });

  it('shows a call the upstream failed as released, with its reason and no charge', async () => {
    const res = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'no [sim:status=400]' }] });
    expect(res.status).to.not.equal(200);
    failedRequestId = res.headers.get('x-request-id')!;
    await expectSettledAndAuditClean(gw, [key]);
    const line = await lineOf((l) => l.request_id === failedRequestId);
    expect(line).to.deep.include({ outcome: 'released', amount: null, units: null, channel: null, key_id: keyId, model: 'chat-fast' });
    expect(line.reason).to.be.a('string').and.not.equal('');
    expect(line.reserved).to.be.greaterThan(0);
  });

  it('shows a refunded call as refunded, with what was refunded', async () => {
    const line = await lineOf((l) => l.request_id === chatRequestId);
    const refund = await gw.admin('POST', `/admin/v1/accounts/${accountId}/refunds`, { reservation_id: line.reservation_id, amount: 1, reference: 'goodwill-1', reason: 'goodwill' });
    expect(refund.status).to.equal(201);
    expect(await lineOf((l) => l.request_id === chatRequestId)).to.deep.include({ outcome: 'refunded', refunded: 1, amount: line.amount });
    await gw.expectAuditClean();
  });

  it('shows an asynchronous task by its task id once settled', async () => {
    const video = await gw.api(key, 'POST', '/v1/videos/generations', { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a cat' }], duration: 4 });
    expect(video.status).to.equal(200);
    videoTaskId = video.body.id;
    await expectSettledAndAuditClean(gw, [key]);
    const line = await lineOf((l) => l.task_id === videoTaskId);
    expect(line).to.deep.include({ outcome: 'settled', request_id: null, model: 'video-ref-2.0', endpoint: 'POST /v1/videos/generations', key_id: keyId });
    expect(line.units).to.deep.equal({ seconds: 4 });
    expect(line.channel).to.equal('ark');
  });

  it('shows a reservation still open as open', async () => {
    const purpose = { kind: 'request' as const, ref: 'req_open_one', description: 'image-5.0', actor: keyId, model: 'image-5.0', endpoint: 'POST /v1/images/generations' };
    const reservationId = await gw.accounts.reserve({ accountId, amount: 300, purpose, ttlMs: 60_000 });
    const open = await linesOf('&outcome=open');
    expect(open.map((l) => [l.reservation_id, l.outcome, l.amount, l.channel])).to.deep.equal([[reservationId, 'open', null, null]]);
    await gw.accounts.release(accountId, reservationId, 'test over');
    expect((await lineOf((l) => l.reservation_id === reservationId)).outcome).to.equal('released');
  });

  it('has no line for a refused request: invalid input, or 402 for want of balance', async () => {
    const before = (await linesOf('')).length;
    const invalid = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast' });
    expect(invalid.status).to.equal(400);
    const unknownModel = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(unknownModel.status).to.equal(400);
    expect((await linesOf('')).length).to.equal(before);
    const broke = await gw.fundedAccount(0);
    const poor = await gw.api(broke.key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(poor.status).to.equal(402);
    expect((await admin<Page<Line>>(`/admin/v1/requests?account_id=${broke.accountId}`)).data).to.deep.equal([]);
  });

  it('filters by key, model, endpoint, channel, outcome and time, and pages without repeating or skipping', async () => {
    const other = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'second' });
    const client = new OpenAI({ apiKey: other.body.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'chat-fast', messages: [{ role: 'user', content: `call ${i} [sim:tokens=2]` }] });
    await expectSettledAndAuditClean(gw, [key]);
    const all = await linesOf('');
    expect(all).to.have.length(7);
    const times = all.map((l) => l.reserved_at);
    expect([...times].sort().reverse(), 'newest first').to.deep.equal(times);

    expect((await linesOf(`&key_id=${other.body.id}`)).map((l) => l.key_name)).to.deep.equal(['second', 'second', 'second']);
    expect((await linesOf('&model=video-ref-2.0')).map((l) => l.task_id)).to.deep.equal([videoTaskId]);
    expect((await linesOf(`&endpoint=${encodeURIComponent('POST /v1/chat/completions')}`)).length).to.equal(5);
    expect((await linesOf('&channel=default')).every((l) => l.channel === 'default')).to.equal(true);
    expect((await linesOf('&channel=default')).length).to.equal(4);
    expect((await linesOf('&outcome=refunded')).map((l) => l.request_id)).to.deep.equal([chatRequestId]);
    expect((await linesOf('&outcome=settled')).map((l) => l.outcome)).to.deep.equal(['settled', 'settled', 'settled', 'settled']);
    expect((await linesOf('&outcome=released')).length).to.equal(2);
    const oldest = all[all.length - 1]!.reserved_at;
    expect((await linesOf(`&to=${encodeURIComponent(oldest)}`)).length, 'to is exclusive').to.equal(0);
    expect((await linesOf(`&from=${encodeURIComponent(oldest)}`)).length, 'from is inclusive').to.equal(7);
    expect(await linesOf('&from=2999-01-01T00:00:00Z')).to.deep.equal([]);

    const paged: Line[] = [];
    for (let after: string | null = null; ; ) {
      const page: Page<Line> = await admin(`/admin/v1/requests?account_id=${accountId}&limit=2${after ? `&after=${after}` : ''}`);
      expect(page.data.length).to.be.at.most(2);
      paged.push(...page.data);
      if (!page.has_more) break;
      after = page.next_after;
    }
    expect(paged.map((l) => l.reservation_id)).to.deep.equal(all.map((l) => l.reservation_id));
    // Across accounts too: this account's lines among everyone's, in the same order.
    const everyone = await admin<Page<Line>>('/admin/v1/requests?limit=100');
    expect(everyone.data.filter((l) => l.account_id === accountId).map((l) => l.reservation_id)).to.deep.equal(all.map((l) => l.reservation_id));
  });

  it('refuses bad filters with 400 in the admin error shape, changing nothing', async () => {
    const head = await gw.store.headPosition();
    const bad: [string, string][] = [
      ['outcome=bogus', 'outcome'],
      ['from=yesterday', 'from'],
      ['to=2026-13-01T00:00:00Z', 'to'],
      ['from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['after=12', 'after'],
      ['format=xlsx', 'format'],
      ['account_id=', 'account_id'],
      ['nonsense=1', 'nonsense'],
    ];
    for (const [query, param] of bad) {
      const res = await gw.admin('GET', `/admin/v1/requests?${query}`);
      expect(res.status, query).to.equal(400);
      expect(res.body.error, query).to.include({ type: 'invalid_request_error', param });
      expect(res.body.error.message, query).to.be.a('string');
    }
    // Odd but well-formed input is answered, never a 5xx: a cursor at the far end of time, text PostgreSQL cannot hold.
    const farCursor = Buffer.from('request:999999999999999999:rsv_x').toString('base64url');
    expect((await gw.admin('GET', `/admin/v1/requests?after=${farCursor}`)).status).to.equal(200);
    for (const query of ['model=%00', 'q=%00', 'q=%ED%A0%80', 'channel=%F0%9F%98%80']) {
      expect((await gw.admin('GET', `/admin/v1/requests?${query}`)).status, query).to.be.oneOf([200, 400]);
      expect((await gw.admin('GET', `/admin/v1/keys?${query}`)).status, query).to.be.oneOf([200, 400]);
    }
    const keys = await gw.admin('GET', '/admin/v1/keys?status=lost');
    expect([keys.status, keys.body.error.param]).to.deep.equal([400, 'status']);
    expect((await gw.admin('GET', '/admin/v1/keys?after=acct_1')).status).to.equal(400);
    expect(await gw.store.headPosition()).to.deep.equal(head);
  });

  it('answers CSV with the ledger’s cell rules: a hostile request id or key name stays text', async () => {
    const path = `/admin/v1/requests?account_id=${accountId}`;
    const csv = await csvOf(`${path}&format=csv`);
    expect(await csvOf(path, { accept: 'text/csv' }), 'Accept: text/csv answers the same bytes').to.equal(csv);
    const sheet = readAsSpreadsheet(csv);
    expect(sheet).to.have.length(1 + 7);
    const requestIds = column(sheet, 'request_id');
    expect(requestIds.filter((c) => c.kind === 'formula'), 'no cell a spreadsheet would run').to.deep.equal([]);
    expect(column(sheet, 'key_name').filter((c) => c.kind === 'formula')).to.deep.equal([]);
    // The request id's cell is the ledger CSV's, byte for byte: one escaping rule (accounts/csv).
    const ledgerCsv = await csvOf(`/admin/v1/accounts/${accountId}/ledger?format=csv&type=settlement`);
    const escapedId = toCsv([], [[hostileRequestId]]).replace(/^\uFEFF\r\n/, '').replace(/\r\n$/, '');
    expect(escapedId).to.equal(`'${hostileRequestId}`);
    expect(ledgerCsv.split('\r\n').some((row) => row.split(',').includes(escapedId)), 'the ledger writes the request id so').to.equal(true);
    expect(csv.split('\r\n').some((row) => row.split(',').includes(escapedId)), 'the request log writes it the same').to.equal(true);
    const escapedName = toCsv([], [[hostileName]]).replace(/^\uFEFF\r\n/, '').replace(/\r\n$/, '');
    expect(csv).to.include(`,${escapedName},`);
    // The text helper decodes the byte-order mark away; the bytes carry it, as the ledger's do.
    const bytes = Buffer.from(await (await fetch(`${gw.url}${path}&format=csv`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).arrayBuffer());
    expect([...bytes.subarray(0, 3)]).to.deep.equal([0xef, 0xbb, 0xbf]);
    expect(csv.split('\r\n')[0]).to.equal(
      'reserved_at,closed_at,account_id,account_name,key_id,key_name,model,endpoint,channel,units,reserved_minor,amount_minor,amount_yuan,refunded_minor,outcome,reason,request_id,task_id,reservation_id',
    );
    const filtered = readAsSpreadsheet(await csvOf(`${path}&format=csv&outcome=released`));
    expect(column(filtered, 'outcome').map((c) => (c.kind === 'text' ? c.text : c.kind))).to.deep.equal(['released', 'released']);
  });

  it('shows the owner their own request log without any channel', async () => {
    const own = await gw.api(key, 'GET', '/v1/account/requests?limit=100');
    expect(own.status).to.equal(200);
    const lines = own.body.data as Line[];
    expect(lines.map((l) => l.reservation_id)).to.deep.equal((await linesOf('')).map((l) => l.reservation_id));
    expect(JSON.stringify(own.body)).to.not.include('channel');
    expect(lines.find((l) => l.request_id === chatRequestId)).to.deep.include({ outcome: 'refunded', key_name: hostileName });
    const csv = await gw.api(key, 'GET', '/v1/account/requests?format=csv');
    expect(csv.status).to.equal(200);
    expect(String(csv.body).split('\r\n')[0]).to.not.include('channel');
    expect(String(csv.body)).to.not.include('default');
    for (const query of ['channel=default', 'account_id=acct_x']) {
      const res = await gw.api(key, 'GET', `/v1/account/requests?${query}`);
      expect([res.status, res.body.error.param], query).to.deep.equal([400, query.split('=')[0]]);
    }
    const stranger = await gw.fundedAccount(1_000_000);
    expect((await gw.api(stranger.key, 'GET', '/v1/account/requests')).body.data).to.deep.equal([]);
  });

  it('releases a call the upstream failed with the answer’s code, not the upstream’s words that name the channel, in the owner’s request log and ledger', async () => {
    const owner = await gw.fundedAccount(10_000_000);
    const failed = await gw.api(owner.key, 'POST', '/v1/images/generations', { model: 'image-5.0', prompt: 'nothing [sim:count=0]' });
    expect([failed.status, failed.body.error.code]).to.deep.equal([502, 'no_images']);
    await expectSettledAndAuditClean(gw, [owner.key]);
    const own = await gw.api(owner.key, 'GET', '/v1/account/requests');
    expect((own.body.data as Line[]).map((l) => [l.outcome, l.reason])).to.deep.equal([['released', 'upstream failed: no_images']]);
    const ledger = await gw.api(owner.key, 'GET', '/v1/account/ledger?type=release');
    expect((ledger.body.data as { description: string }[]).map((e) => e.description)).to.deep.equal(['upstream failed: no_images']);
    for (const body of [own.body, ledger.body]) expect(JSON.stringify(body)).to.not.include('channel');
  });

  it('is replayed and compared by the audit like every read model', async () => {
    await gw.expectAuditClean();
    await gw.pool.query(`UPDATE ${READ_MODEL_SCHEMA}.request_log SET channel = 'tampered' WHERE account_id = $1 AND channel IS NOT NULL`, [accountId]);
    // The key's lifetime spend, the one row of this account's actors (all its calls were its key's).
    const spend = await gw.pool.query(`UPDATE ${READ_MODEL_SCHEMA}.actor_spend SET spent = spent + 1 WHERE account_id = $1 AND actor = $2`, [accountId, keyId]);
    expect(spend.rowCount).to.equal(1);
    const report = await runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 3_600_000 });
    expect(report.mismatches).to.deep.equal([
      'request_log: 10 row(s) of request_log differ from a replay of the log',
      'request_log: 2 row(s) of actor_spend differ from a replay of the log',
    ]);
    await rebuildProjections(gw.pool, gw.store, allProjections, READ_MODEL_SCHEMA, gw.logger);
    await gw.expectAuditClean();
    expect((await linesOf('&channel=tampered')).length).to.equal(0);
  });

  describe('GET /admin/v1/keys', () => {
    const search = async (query: string) => {
      const res = await gw.admin('GET', `/admin/v1/keys?${query}`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(ajv.validate({ $ref: '#/components/schemas/KeyListingPage' }, res.body), ajv.errorsText()).to.equal(true);
      return res;
    };

    it('finds a key by a part of its name, the start of its prefix, or its id, with its account and spend', async () => {
      const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { name: 'Nightly Batch Runner' });
      const byName = await search('q=batch%20RUN');
      expect((byName.body.data as KeyListing[]).map((k) => k.id)).to.deep.equal([issued.body.id]);
      const byPrefix = await search(`q=${encodeURIComponent(issued.body.prefix)}`);
      expect((byPrefix.body.data as KeyListing[]).map((k) => k.id)).to.include(issued.body.id);
      const byId = await search(`q=${keyId}`);
      const found = (byId.body.data as KeyListing[])[0]!;
      expect(byId.body.data).to.have.length(1);
      const usage = await gw.admin('GET', `/admin/v1/usage?account_id=${accountId}&group_by=key`);
      const spent = (usage.body.data as { key_id: string; amount: number }[]).find((g) => g.key_id === keyId)!.amount;
      expect(found).to.deep.include({ id: keyId, name: hostileName, status: 'active', account_id: accountId, account_name: 'Request log Ltd', spent });
      expect(found.last_used_at).to.be.a('string');
      expect((await search('q=%25')).body.data, 'a % is a character, not a wildcard').to.deep.equal([]);
    });

    it('never answers a secret or a hash', async () => {
      const { rows } = await gw.pool.query<{ key_hash: string }>(`SELECT key_hash FROM ${READ_MODEL_SCHEMA}.api_keys WHERE key_id = $1`, [keyId]);
      const text = JSON.stringify((await search('limit=100')).body);
      expect(text).to.include(keyId);
      expect(text).to.not.include(key);
      expect(text).to.not.include(key.slice(12));
      expect(text).to.not.include(rows[0]!.key_hash);
      expect(text).to.not.include('hash');
    });

    it('filters by account and status and pages newest first', async () => {
      const mine = (await search(`account_id=${accountId}&limit=100`)).body.data as KeyListing[];
      expect(mine.length).to.equal(3);
      expect(mine.map((k) => k.id)).to.deep.equal(mine.map((k) => k.id).sort().reverse());
      const revoked = mine.find((k) => k.name === 'second')!;
      expect((await gw.admin('DELETE', `/admin/v1/keys/${revoked.id}`)).status).to.equal(204);
      expect(((await search(`account_id=${accountId}&status=revoked`)).body.data as KeyListing[]).map((k) => k.id)).to.deep.equal([revoked.id]);
      expect(((await search(`account_id=${accountId}&status=active`)).body.data as KeyListing[]).length).to.equal(2);
      expect((await search(`account_id=${accountId}&status=expired`)).body.data).to.deep.equal([]);
      const paged: KeyListing[] = [];
      for (let after: string | null = null; ; ) {
        const page = (await search(`account_id=${accountId}&limit=1${after ? `&after=${after}` : ''}`)).body as Page<KeyListing>;
        paged.push(...page.data);
        if (!page.has_more) break;
        after = page.next_after;
      }
      expect(paged.map((k) => k.id)).to.deep.equal(mine.map((k) => k.id));
    });

    it('counts what a key was charged, an overrun included, less what was refunded of it, as its request-log lines do', async () => {
      const spender = await gw.fundedAccount(1_000_000);
      const spentOf = async (): Promise<number> => {
        expect(await gw.progress.waitForCommitted(['request_log', 'api_keys'], WAIT_LIMIT_MS), 'the read models at what was committed').to.equal(true);
        const listed = (await search(`q=${spender.keyId}`)).body.data as KeyListing[];
        expect(listed.map((k) => k.id)).to.deep.equal([spender.keyId]);
        return listed[0]!.spent;
      };
      expect(await spentOf(), 'a key that has made no call').to.equal(0);
      const call = await gw.api(spender.key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi [sim:tokens=5]' }] });
      expect(call.status).to.equal(200);
      await expectSettledAndAuditClean(gw, [spender.key]);
      const chat = (await admin<Page<Line>>(`/admin/v1/requests?account_id=${spender.accountId}`)).data[0]!;
      expect(chat).to.deep.include({ key_id: spender.keyId, outcome: 'settled' });
      // A charge of 250 against a reservation of 100: the overrun is spent too.
      const purpose = { kind: 'request' as const, ref: 'req_overrun', description: 'chat-fast', actor: spender.keyId, model: 'chat-fast', endpoint: 'POST /v1/chat/completions' };
      const overrun = await gw.accounts.reserve({ accountId: spender.accountId, amount: 100, purpose, ttlMs: 60_000 });
      await gw.accounts.settle(spender.accountId, overrun, units(250), { tokens: 250 });
      expect(await spentOf()).to.equal(chat.amount! + 250);

      const refund = await gw.admin('POST', `/admin/v1/accounts/${spender.accountId}/refunds`, { reservation_id: overrun, amount: 70, reference: 'spend-refund-1', reason: 'goodwill' });
      expect(refund.status).to.equal(201);
      const spent = await spentOf();
      expect(spent, 'the refund taken off the key that made the charge').to.equal(chat.amount! + 250 - 70);
      const lines = (await admin<Page<Line>>(`/admin/v1/requests?account_id=${spender.accountId}`)).data;
      expect(spent, 'the sum of its lines').to.equal(lines.reduce((sum, l) => sum + (l.amount ?? 0) - l.refunded, 0));
      // Replaying the same refund changes nothing.
      expect((await gw.admin('POST', `/admin/v1/accounts/${spender.accountId}/refunds`, { reservation_id: overrun, amount: 70, reference: 'spend-refund-1', reason: 'goodwill' })).status).to.equal(200);
      expect(await spentOf()).to.equal(spent);
      await gw.expectAuditClean();
    });
  });
});
