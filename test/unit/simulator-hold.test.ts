import { expect } from 'chai';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { arkPlaceholderKey, arkReleasePath, ARK_TASKS_PATH } from '../support/simulated-ark';

/**
 * The simulated task providers' `hold`: queued whatever the time, until released (or cancelled).
 * The podcast synthesis's hold, a held WebSocket session, is tested with its adapter
 * (volcengine-podcast.test.ts).
 */
describe('upstream simulator: held tasks', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator();
  });
  after(async () => sim.close());

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    // The simulated Ark checks its key; the other simulated providers take none.
    const headers: Record<string, string> = { authorization: `Bearer ${arkPlaceholderKey()}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(sim.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  }

  const providers = [
    { name: 'Ark videos', create: [ARK_TASKS_PATH, { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a held video [sim:hold]' }] }], read: `${ARK_TASKS_PATH}/`, release: arkReleasePath },
  ] as const;

  for (const p of providers) {
    it(`${p.name}: stays queued until POST ${p.release('{id}')}, then succeeds; a second release is 409`, async () => {
      const created = await call('POST', p.create[0], p.create[1]);
      expect(created.status, JSON.stringify(created.body)).to.equal(200);
      const id = created.body.id as string;
      expect((await call('GET', p.read + id)).body.status).to.equal('queued');
      const released = await call('POST', p.release(id));
      expect(released).to.deep.equal({ status: 200, body: { id, released: true } });
      expect((await call('GET', p.read + id)).body.status).to.equal('succeeded');
      expect((await call('POST', p.release(id))).status).to.equal(409);
    });
  }

  it('a task that is not held cannot be released', async () => {
    const created = await call('POST', ARK_TASKS_PATH, { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a slow video [sim:delay=60000]' }] });
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    expect((await call('POST', arkReleasePath(created.body.id))).status).to.equal(409);
    expect((await call('GET', `${ARK_TASKS_PATH}/${created.body.id}`)).body.status).to.not.equal('succeeded');
  });
});
