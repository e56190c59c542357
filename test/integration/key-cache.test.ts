import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';

/** The key cache in a real gateway, and across two gateways on one database. */
describe('API key cache @integration', function () {
  let a: TestGateway;
  let b: TestGateway;

  before(async () => {
    a = await startTestGateway();
    b = await startTestGateway({}, { reuseDatabaseOf: a });
    // Each gateway caches once it follows the log and its read model has the log's head.
    await waitFor('both key caches to follow the log', async () => (await Promise.all([a, b].map(async (gw) => servedFromMemory(gw, (await gw.fundedAccount(0)).key)))).every(Boolean));
  });

  after(async () => {
    await b?.close();
    await a?.close();
  });

  /**
   * Whether the gateway serves `key` from memory on its next use after this one. (A gateway
   * caches nothing while a key event, an issue included, is not in its read model yet.)
   */
  async function servedFromMemory(gw: TestGateway, key: string): Promise<boolean> {
    expect((await gw.api(key, 'GET', '/v1/account')).status).to.equal(200);
    const hits = gw.keyCache.stats().hits;
    expect((await gw.api(key, 'GET', '/v1/account')).status).to.equal(200);
    return gw.keyCache.stats().hits > hits;
  }

  it('answers a known key from memory and refuses it from the next request on after revocation in the same process', async () => {
    const { key, keyId } = await a.fundedAccount(0);
    await waitFor('the key to be served from memory', () => servedFromMemory(a, key));
    expect((await a.admin('DELETE', `/admin/v1/keys/${keyId}`)).status).to.equal(204);
    const after = await a.api(key, 'GET', '/v1/account');
    expect(after.status).to.equal(401);
    expect(after.body.error.code).to.equal('invalid_api_key');
  });

  it('refuses a key revoked in another process once the revocation is notified there', async () => {
    const { key, keyId } = await a.fundedAccount(0);
    await waitFor('the other gateway to serve the key from memory', () => servedFromMemory(b, key));

    const invalidations = b.keyCache.stats().invalidations;
    expect((await a.admin('DELETE', `/admin/v1/keys/${keyId}`)).status).to.equal(204);
    // B hears of the revocation through the log's notification; from then on the key is refused.
    await waitFor('the revocation to reach the other gateway', async () => b.keyCache.stats().invalidations > invalidations);
    expect((await b.api(key, 'GET', '/v1/account')).status).to.equal(401);
    expect((await a.api(key, 'GET', '/v1/account')).status).to.equal(401);
  });

  it('finds a key issued in another process on its first use', async () => {
    const { key } = await a.fundedAccount(0);
    expect((await b.api(key, 'GET', '/v1/account')).status).to.equal(200);
  });

  it('leaves the ledger clean', async () => {
    await a.expectAuditClean();
  });
});
