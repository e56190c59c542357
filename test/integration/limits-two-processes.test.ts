import { expect } from 'chai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { countMessageTokens } from '../../src/billing/tokens';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { callJson, type GatewayProcess } from '../support/gateway-process';
import { startProcessFleet, type ProcessFleet } from '../support/process-fleet';
import { sample, scrapeMetrics } from '../support/metrics';
import { startTcpProxy, tcpTargetOf, throughProxy, type TcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

const ADMIN_TOKEN = 'limits-admin-token';

/**
 * A chat call whose prompt says its own token count (the gateway's count of it) and asks the
 * simulator to report that prompt and `completion` tokens as its usage.
 */
function selfDescribingCall(completion: number, maxTokens: number) {
  for (let prompt = 1; prompt < 100; prompt++) {
    const messages = [{ role: 'user' as const, content: `tpm probe [sim:usage=${prompt},${completion}]` }];
    if (countMessageTokens(messages, 'o200k_base') === prompt) return { body: { model: 'chat-fast', messages, max_tokens: maxTokens }, prompt };
  }
  throw new Error('no self-describing prompt');
}

/**
 * Two gateway processes on one database share each key's limits: together they admit the key's
 * rate, not twice it. The rates are so low (at most 2 a minute, or one call's tokens in 30 s) that
 * no unit refills while a test runs: the counts depend on no timing. The processes lease (one
 * minute of a rate at once), as production does at higher rates; while the shared store is out of
 * reach each limits alone, and they share again once it answers.
 */
describe('limits across two gateway processes @integration', function () {
  this.timeout(180_000);

  let fleet: ProcessFleet;
  let proxy: TcpProxy;
  let gateways: GatewayProcess[] = [];

  before(async () => {
    fleet = await startProcessFleet('limits', ADMIN_TOKEN);
    // The limits reach the database through a relay the test can cut; everything else directly.
    proxy = await startTcpProxy(tcpTargetOf(fleet.database.url));
    const env = {
      LIMITS_DATABASE_URL: throughProxy(fleet.database.url, proxy),
      LIMITS_LEASE_MS: '60000',
      LIMITS_PROBE_MS: '50',
      // A store that is slow to answer on a loaded machine is not out of reach: only the cut is.
      LIMITS_STORE_TIMEOUT_MS: '10000',
      RATE_LIMIT_PER_MINUTE: '100000',
      POLL_MIN_INTERVAL_MS_IMAGE: '600000',
    };
    gateways = await Promise.all(['g1', 'g2'].map((name) => fleet.start(name, env)));
  });

  after(async () => {
    await fleet?.close();
    await proxy?.close();
  });

  /** A funded account and a key with `settings`, made through g1. */
  async function keyWith(settings: Record<string, unknown>): Promise<{ accountId: string; key: string }> {
    const g1 = gateways[0]!;
    const accountId = (await callJson(`${g1.url}/admin/v1/accounts`, ADMIN_TOKEN, 'POST', { name: 'limits' })).body.id as string;
    expect((await callJson(`${g1.url}/admin/v1/accounts/${accountId}/credits`, ADMIN_TOKEN, 'POST', { amount: 100_000_000, reference: 'fund' })).status).to.equal(201);
    const issued = await callJson(`${g1.url}/admin/v1/accounts/${accountId}/keys`, ADMIN_TOKEN, 'POST', settings);
    expect(issued.status, JSON.stringify(issued.body)).to.equal(201);
    return { accountId, key: issued.body.key as string };
  }

  /** Sends `n` chat calls at once, alternating between the gateways; the statuses, and the error codes and Retry-After of the refused. */
  async function fire(key: string, n: number, body: unknown): Promise<{ ok: number; refused: { status: number; code: string; message: string; retryAfter: number }[] }> {
    const answers = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const res = await fetch(`${gateways[i % 2]!.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const json = (await res.json()) as { error?: { code: string; message: string } };
        return { status: res.status, code: json.error?.code ?? '', message: json.error?.message ?? '', retryAfter: Number(res.headers.get('retry-after') ?? 0) };
      }),
    );
    return { ok: answers.filter((a) => a.status === 200).length, refused: answers.filter((a) => a.status !== 200) };
  }

  async function expectLedgerExact(): Promise<void> {
    const pool = fleet.database.pool;
    const report = await runAudit(pool, new PostgresEventStore({ pool }), allProjections, { staleAfterMs: 3_600_000 });
    expect(report.invariantViolations).to.deep.equal([]);
    expect(report.mismatches).to.deep.equal([]);
  }

  const plain = selfDescribingCall(5, 5).body;

  it("admits the key's request rate across both processes together: 2 of 12 at 2 a minute", async () => {
    const { key } = await keyWith({ rate_limit_per_minute: 2 });
    const { ok, refused } = await fire(key, 12, plain);
    expect(ok).to.equal(2);
    expect(refused).to.have.length(10);
    for (const r of refused) {
      expect(r).to.deep.include({ status: 429, code: 'rate_limit_exceeded' });
      expect(r.message).to.contain('rate limit of 2 requests per minute');
      expect(r.retryAfter).to.be.within(1, 30);
    }
    await expectLedgerExact();
  });

  it("admits the key's tokens per minute across both: counted at admission, corrected by the usage settled", async () => {
    // A call counts its prompt and max_tokens (C) at admission; the first uses 20 fewer, the others all of it.
    const small = selfDescribingCall(30, 50);
    const full = selfDescribingCall(50, 50);
    expect(small.prompt).to.equal(full.prompt);
    const counted = full.prompt + 50;
    // 2C - 20: room for the first call, and for a second only once the first gave back its 20 unused
    // tokens; after the second, C - 20 is missing, over 30 s of refill away.
    const { key } = await keyWith({ tokens_per_minute: 2 * counted - 20 });
    expect((await fire(key, 1, small.body)).ok).to.equal(1);
    const { ok, refused } = await fire(key, 10, full.body);
    expect(ok, 'only the tokens the first call gave back let a second through').to.equal(1);
    expect(refused).to.have.length(9);
    for (const r of refused) {
      expect(r).to.deep.include({ status: 429, code: 'rate_limit_exceeded' });
      expect(r.message).to.contain(`tokens-per-minute limit of ${2 * counted - 20}`);
    }
    await expectLedgerExact();
  });

  it('holds the polling limit of a task across both processes', async () => {
    const { key } = await keyWith({});
    const [g1, g2] = gateways as [GatewayProcess, GatewayProcess];
    const created = await callJson(`${g1.url}/v1/images/async`, key, 'POST', { model: 'image-5.0', prompt: 'poll me' });
    expect(created.status, JSON.stringify(created.body)).to.be.oneOf([200, 201, 202]);
    const id = created.body.id as string;
    expect((await callJson(`${g2.url}/v1/images/async/${id}`, key)).status).to.equal(200);
    const again = await callJson(`${g1.url}/v1/images/async/${id}`, key);
    expect(again.status).to.equal(429);
    expect(again.body.error.code).to.equal('polling_too_fast');
    expect((await callJson(`${g2.url}/v1/images/async/${id}`, key)).status).to.equal(429);
  });

  it('limits each process alone while the store is out of reach, says so once and meters it, and shares again once it answers', async () => {
    const warned = () => gateways.map((g) => g.output.filter((line) => line.includes('the shared limit store is out of reach')).length);
    const recovered = () => gateways.map((g) => g.output.filter((line) => line.includes('the shared limit store answers again')).length);
    expect(warned()).to.deep.equal([0, 0]);
    const outagesBefore = await Promise.all(gateways.map(async (g) => sample(await scrapeMetrics(g.url), 'gateway_limit_store_outages_total')));
    proxy.cut();

    const { key } = await keyWith({ rate_limit_per_minute: 2 });
    // Each process counts the key's rate alone: 2 each.
    const alone = await fire(key, 12, plain);
    expect(alone.ok).to.equal(4);
    for (const r of alone.refused) expect(r).to.deep.include({ status: 429, code: 'rate_limit_exceeded' });
    expect(warned(), 'logged once per outage, not per request').to.deep.equal([1, 1]);
    for (const [i, g] of gateways.entries()) {
      const metrics = await scrapeMetrics(g.url);
      expect(sample(metrics, 'gateway_limit_store_up'), g.name).to.equal(0);
      expect(sample(metrics, 'gateway_limit_store_outages_total') - outagesBefore[i]!, g.name).to.equal(1);
    }

    proxy.restore();
    await waitFor('both processes to share their limits again', async () => {
      const up = await Promise.all(gateways.map(async (g) => sample(await scrapeMetrics(g.url), 'gateway_limit_store_up')));
      return up.every((u) => u === 1);
    });
    expect(recovered()).to.deep.equal([1, 1]);
    const { key: next } = await keyWith({ rate_limit_per_minute: 2 });
    const shared = await fire(next, 12, plain);
    expect(shared.ok).to.equal(2);
    await expectLedgerExact();
  });
});
