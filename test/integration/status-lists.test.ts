import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../support/gateway';

/**
 * The spec's status lists are binding: video create, minutes create, chat, Responses, image
 * generation and web Q&A have no 403 and no 404, so an unknown model and a model the key may not
 * use are both 400s naming `model`, each in its endpoint's error shape.
 */
describe('status lists: unknown and forbidden models are 400s @integration', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ FILE_URL_ALLOW_PRIVATE_TARGETS: 'true' });
  });
  after(async () => gw.close());

  const text = { type: 'text', text: 'a lighthouse at dusk' };
  /** Each endpoint's request for a given model. */
  const requests = (model: string, fileUrl: string): [string, string, Record<string, unknown>][] => [
    ['video create', '/v1/videos/generations', { model, content: [text] }],
    ['chat', '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] }],
    ['Responses', '/v1/responses', { model, input: 'hi' }],
    ['image generation', '/v1/images/generations', { model, prompt: 'a lighthouse' }],
    ['minutes create', '/v1/audio/minutes', { model, file_url: fileUrl }],
    ['web Q&A', '/v1/agent/chat/completions', { bot_id: 'webqa-pro', model, messages: [{ role: 'user', content: 'hi' }] }],
  ];
  /** A model of the right type for each endpoint, in the order of `requests`. */
  const realModels = ['video-ref-2.0', 'chat-fast', 'chat-fast', 'image-5.0', 'service-minutes', 'webqa-pro'];

  function expectModelError(name: string, res: { status: number; body: any }, code: string): void {
    expect(res.status, `${name}: ${JSON.stringify(res.body)}`).to.equal(400);
    if (name === 'minutes create') {
      // Shape B: {error: message, type}.
      expect(res.body, name).to.have.keys('error', 'type');
      expect(res.body.type, name).to.equal('invalid_request_error');
    } else {
      expect(res.body.error, name).to.deep.include({ code, param: 'model', type: 'invalid_request_error' });
    }
  }

  it('answers an unknown model with 400 model_not_found, reserving nothing', async () => {
    const { key } = await gw.fundedAccount(100_000_000);
    const fileUrl = `${gw.simulator.url}/sim/media/a.mp3`;
    for (const [name, path, body] of requests('no-such-model', fileUrl)) {
      expectModelError(name, await gw.api(key, 'POST', path, body), 'model_not_found');
    }
    // Web Q&A names its agent by bot_id: an unknown one is a 400 naming bot_id.
    const noBot = await gw.api(key, 'POST', '/v1/agent/chat/completions', { bot_id: 'no-such-bot', messages: [{ role: 'user', content: 'hi' }] });
    expect(noBot.status).to.equal(400);
    expect(noBot.body.error).to.deep.include({ code: 'bot_not_found', param: 'bot_id' });
    expect(await gw.balance(key)).to.deep.include({ available: 100_000_000, frozen: 0 });
  });

  it('answers a model the key may not use with 400 model_not_allowed, reserving nothing', async () => {
    const { key } = await gw.fundedAccount(100_000_000, ['chat-pro']);
    const fileUrl = `${gw.simulator.url}/sim/media/a.mp3`;
    const all = requests('', fileUrl);
    for (const [i, [name, path, body]] of all.entries()) {
      const model = realModels[i]!;
      const named = name === 'web Q&A' ? { ...body, bot_id: model, model: undefined } : { ...body, model };
      const res = await gw.api(key, 'POST', path, named);
      expectModelError(name, res, 'model_not_allowed');
      if (name === 'minutes create') expect(res.body.error).to.include(`may not use the model '${model}'`);
    }
    expect(await gw.balance(key)).to.deep.include({ available: 100_000_000, frozen: 0 });
    await gw.expectAuditClean();
  });
});
