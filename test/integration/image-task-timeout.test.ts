import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { expectSettledAndAuditClean, waitFor } from '../support/wait';

/**
 * An async image task's generation is billed by the provider whether or not its answer reaches
 * the gateway: one that outlives the channel's deadline fails the task, its reservation released,
 * and is never requested a second time (docs/tasks.md).
 */
describe('async images: a generation that times out is made once @integration', () => {
  let gw: TestGateway;
  let key: string;
  let generations = 0;

  before(async () => {
    gw = await startTestGateway({ UPSTREAM_TIMEOUT_MS: '300' });
    ({ key } = await gw.fundedAccount(10_000_000));
    // Ark's image generation, held past every deadline: the provider is "still generating".
    gw.simulator.addRoutes([
      {
        method: 'POST',
        path: '/ark/api/v3/images/generations',
        handler: () => {
          generations += 1;
        },
      },
    ]);
  });
  after(async () => gw.close());

  it('fails the task at the first timeout with the freeze released, after exactly one generation', async () => {
    const res = await gw.api(key, 'POST', '/v1/images/async', { model: 'image-5.0', prompt: 'a slow lighthouse', n: 2 });
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const final = await waitFor('the task to fail', async () => {
      const task = (await gw.api(key, 'GET', `/v1/images/async/${res.body.id}`)).body;
      return task.status === 'failed' ? task : null;
    });
    expect(final.error).to.match(/timed out: the generation may have been made, so it is not requested again/);
    expect(generations).to.equal(1);
    await expectSettledAndAuditClean(gw, [key]);
    expect(await gw.balance(key)).to.deep.include({ available: 10_000_000, frozen: 0 });
  });
});
