import { expect } from 'chai';
import type { ChannelRoute, ModelEntry } from '../../src/billing/catalog';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { loadConfig } from '../../src/config';
import { upstreamToApiError } from '../../src/http/upstream-errors';
import { createLogger } from '../../src/log';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { UpstreamError } from '../../src/upstreams/errors';
import { Upstreams } from '../../src/upstreams/registry';
import { PinnedChannelGoneError, Router } from '../../src/upstreams/routing/router';

/** The router's answers that come before any channel is asked: a pinned channel gone, every channel disabled; and a model's one protocol. */
describe('routing: answers before any channel is asked, and one protocol per model', () => {
  const logger = createLogger('silent');
  const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
  const entry = (name: string, protocol = 'openai') => ({ name, protocol, base_url: `http://127.0.0.1:9/${protocol === 'coze' ? '' : 'v1'}`, api_key: `sk-${name}` });
  const like = (id: string, channels: ChannelRoute[]): ModelEntry => ({ ...catalog.all().find((m) => m.id === id)!, id: 'm', channel: channels[0]!.name, channels });
  const route = (name: string, priority = 0): ChannelRoute => ({ name, priority, weight: 1 });
  let upstreams: Upstreams;
  let router: Router;

  beforeEach(async () => {
    const config = loadConfig({ CHANNELS: JSON.stringify([entry('default'), entry('a'), entry('b'), entry('coze', 'coze'), entry('coze-2', 'coze'), entry('ark-bots', 'ark')]) });
    upstreams = await Upstreams.start(config, catalog, logger);
    router = new Router(upstreams, { failureThreshold: 3, openMs: 1_000, maxOpenMs: 8_000, cooldownMs: 1_000, maxCooldownMs: 60_000, clock: () => new Date(0) }, { failover: () => undefined, transition: () => undefined });
  });
  afterEach(() => upstreams.close());

  it('sends nothing to a pinned channel that is no longer configured: a 502 upstream_unavailable, not a plain error', async () => {
    let asked = 0;
    const err = await router
      .attempt(like('chat-fast', [route('a')]), async () => {
        asked++;
        return 'x';
      }, { only: 'deleted' })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(PinnedChannelGoneError);
    expect(asked).to.equal(0);
    const answer = upstreamToApiError(err as UpstreamError);
    expect([answer.status, answer.code]).to.deep.equal([502, 'upstream_unavailable']);
    expect(answer.message, 'no channel name reaches the client').not.to.include('deleted');
  });

  it('refuses up front a model whose every channel an operator disabled, and not one with a channel left', () => {
    const two = like('chat-fast', [route('a', 1), route('b')]);
    expect(router.refusal(two)).to.equal(null);
    upstreams.setEnabled('a', false);
    expect(router.refusal(two)).to.equal(null);
    upstreams.setEnabled('b', false);
    const refused = router.refusal(two);
    expect(refused).to.be.instanceOf(UpstreamError);
    expect([refused!.status, refused!.code]).to.deep.equal([502, 'upstream_unavailable']);
    expect(router.refusal(like('chat-fast', [route('a')]))).to.be.instanceOf(UpstreamError);
  });

  it('refuses up front a model whose channels all refused the gateway\'s credentials, one channel or several', async () => {
    const two = like('chat-fast', [route('a', 1), route('b')]);
    await router.attempt(two, async () => Promise.reject(new UpstreamError(401, 'refused'))).catch(() => undefined);
    expect(router.refusal(two)).to.be.instanceOf(UpstreamError);
    expect(router.refusal(like('chat-fast', [route('a')]))).to.be.instanceOf(UpstreamError);
    expect(router.refusal(like('chat-fast', [route('default')])), 'a channel never refused').to.equal(null);
  });

  it('names a model\'s one protocol among the channels that can serve it, and none when they speak several', () => {
    expect(upstreams.protocolOf(like('webqa-pro', [route('coze', 1), route('coze-2')]))).to.equal('coze');
    expect(upstreams.protocolOf(like('webqa-pro', [route('not-configured', 1), route('coze')]))).to.equal('coze');
    // An OpenAI channel cannot serve a bot: it is no second protocol of it.
    expect(upstreams.protocolOf(like('webqa-pro', [route('a', 1), route('coze')]))).to.equal('coze');
    expect(upstreams.protocolOf(like('webqa-pro', [route('coze', 1), route('ark-bots')]))).to.equal(null);
    expect(upstreams.protocolOf(like('webqa-pro', [route('not-configured')]))).to.equal(null);
  });
});
