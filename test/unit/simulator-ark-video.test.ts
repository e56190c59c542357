import { expect } from 'chai';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { arkProvider } from '../../simulator/providers/ark';
import { mounted } from '../../simulator/providers/provider';
import { arkPlaceholderKey, ARK_TASKS_PATH } from '../support/simulated-ark';
import { waitFor } from '../support/wait';

/**
 * The simulated Ark content-generation tasks speak Ark's protocol (references:
 * https://www.volcengine.com/docs/82379/1520757 create, /1521309 get, /1521675 list, /1521720
 * cancel or delete, /1299023 errors): Bearer authentication, Ark's fields, statuses and error body.
 */
describe('upstream simulator: Ark content-generation tasks', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSimulator({ routes: mounted(arkProvider) });
  });
  after(async () => sim.close());

  const TASKS = ARK_TASKS_PATH;

  async function call(method: string, path: string, body?: unknown, key = arkPlaceholderKey()): Promise<{ status: number; headers: Headers; body: any }> {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(sim.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, headers: res.headers, body: await res.json() };
  }

  const create = (text: string, more: Record<string, unknown> = {}) => call('POST', TASKS, { model: 'doubao-seedance-1-5-pro-251215', content: [{ type: 'text', text }], ...more });

  it('refuses a wrong or missing key with Ark 401 AuthenticationError', async () => {
    for (const key of ['not-the-key', '']) {
      const res = await call('POST', TASKS, { model: 'm', content: [{ type: 'text', text: 'x' }] }, key);
      expect(res.status).to.equal(401);
      expect(res.body.error).to.include({ code: 'AuthenticationError', type: 'Unauthorized', param: '' });
      expect(res.body.error.message).to.match(/^The API key or AK\/SK in the request is missing or invalid\. Request id: \d+[0-9a-f]+$/);
    }
  });

  it('creates a task ({id}) and shows it queued, then succeeded with Ark fields: video, usage tokens, settings at the top level', async () => {
    const created = await create('a cat surfing [sim:hold]', { resolution: '720p', ratio: '16:9', duration: 5, seed: 42, return_last_frame: true, service_tier: 'flex' });
    expect(created.status).to.equal(200);
    expect(Object.keys(created.body)).to.deep.equal(['id']);
    const first = await call('GET', `${TASKS}/${created.body.id}`);
    expect(first.headers.get('x-request-id')).to.match(/^\d+[0-9a-f]+$/);
    expect(first.body).to.include({ id: created.body.id, status: 'queued', error: null, service_tier: 'flex', execution_expires_after: 172_800 });
    expect((await fetch(`${sim.url}/sim/videos/${created.body.id}/release`, { method: 'POST' })).status).to.equal(200);
    const done = await waitFor('the task to succeed', async () => {
      const t = await call('GET', `${TASKS}/${created.body.id}`);
      return t.body.status === 'succeeded' ? t.body : null;
    });
    expect(done).to.include({ model: 'doubao-seedance-1-5-pro-251215', resolution: '720p', ratio: '16:9', duration: 5, seed: 42, framespersecond: 24, draft: false });
    expect(done.usage).to.deep.equal({ completion_tokens: 108_900, total_tokens: 108_900 });
    const url = new URL(done.content.video_url);
    expect(url.searchParams.get('X-Tos-Expires')).to.equal('86400');
    expect(url.searchParams.get('X-Tos-Date')).to.match(/^\d{8}T\d{6}Z$/);
    expect(done.content.last_frame_url).to.be.a('string');
    expect((await fetch(done.content.video_url)).headers.get('content-type')).to.equal('video/mp4');
  });

  it('ends a task expired or cancelled at the provider when told to', async () => {
    for (const [directive, status] of [['[sim:expire]', 'expired'], ['[sim:provider-cancel]', 'cancelled'], ['[sim:fail]', 'failed']] as const) {
      const created = await create(`a slow one ${directive} [sim:delay=1]`);
      const task = await waitFor(`the task to end ${status}`, async () => {
        const t = await call('GET', `${TASKS}/${created.body.id}`);
        return t.body.status !== 'queued' && t.body.status !== 'running' ? t.body : null;
      });
      expect(task.status).to.equal(status);
      expect(task).to.not.have.property('content');
    }
  });

  it('cancels a queued task with DELETE, refuses to cancel it twice, deletes a finished one', async () => {
    const held = await create('a held one [sim:hold]');
    expect(await call('DELETE', `${TASKS}/${held.body.id}`)).to.include({ status: 200 }).and.to.have.deep.property('body', {});
    expect((await call('GET', `${TASKS}/${held.body.id}`)).body.status).to.equal('cancelled');
    const again = await call('DELETE', `${TASKS}/${held.body.id}`);
    expect([again.status, again.body.error.type]).to.deep.equal([400, 'BadRequest']);

    const quick = await create('a quick one [sim:delay=1]');
    await waitFor('the quick task to succeed', async () => (await call('GET', `${TASKS}/${quick.body.id}`)).body.status === 'succeeded');
    expect((await call('DELETE', `${TASKS}/${quick.body.id}`)).status).to.equal(200);
    const gone = await call('GET', `${TASKS}/${quick.body.id}`);
    expect([gone.status, gone.body.error.code, gone.body.error.type]).to.deep.equal([404, 'ResourceNotFound', 'NotFound']);
  });

  it('lists tasks newest first, filtered by status, with the total', async () => {
    const held = await create('listed [sim:hold]');
    const listed = await call('GET', `${TASKS}?page_size=500&filter.status=queued`);
    expect(listed.status).to.equal(200);
    expect(listed.body.total).to.equal(listed.body.items.length);
    expect(listed.body.items.map((t: { id: string }) => t.id)).to.include(held.body.id);
    expect(listed.body.items.every((t: { status: string }) => t.status === 'queued')).to.equal(true);
  });

  it("refuses a real person's image and a missing model in Ark's error shape", async () => {
    const person = await call('POST', TASKS, { model: 'm', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'https://img.example.com/sim-real-person.png' }, role: 'first_frame' }] });
    expect(person.status).to.equal(400);
    expect(person.body.error).to.include({ code: 'InputImageSensitiveContentDetected.PrivacyInformation', type: 'BadRequest' });
    const bare = await call('POST', TASKS, { content: [{ type: 'text', text: 'x' }] });
    expect([bare.status, bare.body.error.code, bare.body.error.param]).to.deep.equal([400, 'MissingParameter', 'model']);
  });
});
