import { expect } from 'chai';
import type { Database } from '../../src/db/database';
import { closedPort } from '../support/closed-port';
import { createTestDatabase } from '../support/database';
import { FIXED_CALL } from '../support/fixed-chat';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { sample, scrapeMetrics } from '../support/metrics';

/**
 * LIMITS_DATABASE_URL naming a database of the limits' own, empty: the gateway gives it the limit
 * tables and functions at start, and the limits are counted there (before, every take failed on
 * the missing function, and the limits held nowhere).
 */
describe('limits in a database of their own @integration', function () {
  this.timeout(120_000);
  let limitsDatabase: Database;
  let gw: TestGateway;

  before(async () => {
    limitsDatabase = await createTestDatabase(2);
    gw = await startTestGateway({ LIMITS_DATABASE_URL: limitsDatabase.url });
  });
  after(async () => {
    await gw?.close();
    await limitsDatabase?.close();
  });

  it("creates the limit schema there at start and counts a key's rate in it", async () => {
    const { accountId } = await gw.fundedAccount(100_000_000);
    const issued = await gw.admin('POST', `/admin/v1/accounts/${accountId}/keys`, { rate_limit_per_minute: 2 });
    expect(issued.status).to.equal(201);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await gw.api(issued.body.key, 'POST', '/v1/chat/completions', FIXED_CALL)).status);
    expect(statuses).to.deep.equal([200, 200, 429, 429, 429]);
    const { rows } = await limitsDatabase.pool.query<{ tokens: number }>('SELECT tokens FROM limit_buckets WHERE bucket = $1', [`rpm:${issued.body.id}`]);
    expect(rows, 'the bucket lives in the limits database').to.have.length(1);
    expect(rows[0]!.tokens).to.be.below(1);
    const metrics = await scrapeMetrics(gw.url);
    expect(sample(metrics, 'gateway_limit_store_up')).to.equal(1);
    expect(sample(metrics, 'gateway_limit_store_outages_total')).to.equal(0);
    await gw.expectAuditClean();
  });

  it('refuses to start when the limits database cannot be prepared, naming the setting and not the password', async () => {
    const url = `postgres://limits:s3cret-limits@127.0.0.1:${await closedPort()}/limits`;
    let failure: unknown;
    const started = await startTestGateway({ LIMITS_DATABASE_URL: url }).catch((err: unknown) => void (failure = err));
    await started?.close();
    expect(failure).to.be.instanceOf(Error);
    expect((failure as Error).message).to.contain('LIMITS_DATABASE_URL').and.not.contain('s3cret-limits');
  });
});
