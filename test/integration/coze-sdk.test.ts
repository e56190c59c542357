import fs from 'node:fs';
import { expect } from 'chai';
import { APIError, AuthenticationError, ChatEventType, CozeAPI, RoleType, type StreamChatData } from '@coze/api';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { EXAMPLE_CHANNELS_FILE, type ChannelEntry } from '../../src/upstreams/registry';

/**
 * The simulated Coze driven by Coze's official Node SDK (`@coze/api`), configured only with its
 * `token` and `baseURL`, as a deployment's Coze would be: the SDK's streamed chat, its
 * create-and-poll (create, then `retrieve` until final, then the chat's message list), and its
 * conversations, each as the SDK reads them. The token is the channels file's placeholder.
 */
describe('the simulated Coze, driven by the official @coze/api SDK @integration', () => {
  let sim: RunningSimulator;
  let client: CozeAPI;
  const token = (JSON.parse(fs.readFileSync(EXAMPLE_CHANNELS_FILE, 'utf8')) as ChannelEntry[]).find((e) => e.protocol === 'coze')!.api_key!;

  before(async () => {
    sim = await startSimulator();
    client = new CozeAPI({ token, baseURL: `${sim.url}/coze` });
  });
  after(async () => sim?.close());

  const question = (content: string) => [{ role: RoleType.User, content, content_type: 'text' as const }];

  it('streams a chat: created, the answer in deltas then whole, the follow-ups, completed with usage, done', async () => {
    const events: StreamChatData[] = [];
    for await (const event of client.chat.stream({ bot_id: 'webqa-pro', user_id: 'u-1', additional_messages: question('What is a spring tide? [sim:tokens=4]') })) events.push(event);
    const names = events.map((e) => e.event);
    expect(names[0]).to.equal(ChatEventType.CONVERSATION_CHAT_CREATED);
    expect(names.at(-1)).to.equal(ChatEventType.DONE);
    expect(names.at(-2)).to.equal(ChatEventType.CONVERSATION_CHAT_COMPLETED);
    const deltas = events.flatMap((e) => (e.event === ChatEventType.CONVERSATION_MESSAGE_DELTA ? [e.data.content] : []));
    expect(deltas.join('')).to.equal('word1 word2 word3 word4');
    const completed = events.flatMap((e) => (e.event === ChatEventType.CONVERSATION_MESSAGE_COMPLETED ? [e.data] : []));
    expect(completed.filter((m) => m.type === 'answer').map((m) => m.content)).to.deep.equal(['word1 word2 word3 word4']);
    expect(completed.filter((m) => m.type === 'follow_up')).to.have.length(3);
    expect(JSON.parse(completed.find((m) => m.type === 'verbose')!.content)).to.deep.include({ msg_type: 'generate_answer_finish' });
    const chat = events.find((e) => e.event === ChatEventType.CONVERSATION_CHAT_COMPLETED)!.data as { id: string; conversation_id: string; status: string; usage: { input_count: number; output_count: number; token_count: number } };
    expect(chat.status).to.equal('completed');
    expect(chat.id).to.match(/^\d{19}$/);
    expect(chat.usage.token_count).to.equal(chat.usage.input_count + chat.usage.output_count);
    expect(chat.usage.output_count).to.be.greaterThan(4);
  });

  it('creates and polls a chat: in_progress at first, completed after retrieval, its messages listed, cards only with enable_card', async () => {
    const created = await client.chat.create({ bot_id: 'webqa-pro', user_id: 'u-1', additional_messages: question('Neap tides? [sim:usage=31,7]') });
    expect(created.status).to.equal('in_progress');
    const polled = await client.chat.createAndPoll({ bot_id: 'webqa-pro', user_id: 'u-1', additional_messages: question('Neap tides? [sim:usage=31,7]'), enable_card: true } as Parameters<CozeAPI['chat']['createAndPoll']>[0]);
    expect(polled.chat.status).to.equal('completed');
    expect(polled.chat.usage).to.deep.equal({ token_count: 38, output_count: 7, input_count: 31 });
    const types = polled.messages!.map((m) => `${m.type}/${m.content_type}`);
    expect(types).to.deep.equal(['answer/text', 'answer/card', 'verbose/text', 'follow_up/text', 'follow_up/text', 'follow_up/text']);
    expect(JSON.parse(polled.messages![1]!.content)).to.include.keys('type', 'title', 'url');

    const plain = await client.chat.createAndPoll({ bot_id: 'webqa-basic', user_id: 'u-1', additional_messages: question('Neap tides?') });
    expect(plain.messages!.map((m) => m.type)).to.deep.equal(['answer', 'verbose']);
  });

  it('continues a conversation made with conversations.create: the bot remembers its earlier question', async () => {
    const conversation = await client.conversations.create({ bot_id: 'webqa-pro' });
    expect(conversation.id).to.match(/^\d{19}$/);
    await client.chat.createAndPoll({ bot_id: 'webqa-pro', user_id: 'u-2', conversation_id: conversation.id, additional_messages: question('What is a spring tide?') });
    const second = await client.chat.createAndPoll({ bot_id: 'webqa-pro', user_id: 'u-2', conversation_id: conversation.id, additional_messages: question('And a neap tide?') });
    expect(second.chat.conversation_id).to.equal(conversation.id);
    expect(second.messages!.find((m) => m.type === 'answer')!.content).to.equal('webqa-pro answers: And a neap tide? (earlier in this conversation you asked: "What is a spring tide?")');
  });

  it('cancels a chat that runs on (chat.cancel): canceled, its turn kept out of the conversation, the next chat taken; a running chat refuses the next one (4016)', async () => {
    const conversation = await client.conversations.create({ bot_id: 'webqa-pro' });
    const ask = (content: string) => client.chat.create({ bot_id: 'webqa-pro', user_id: 'u-3', conversation_id: conversation.id, additional_messages: question(content) });
    await client.chat.createAndPoll({ bot_id: 'webqa-pro', user_id: 'u-3', conversation_id: conversation.id, additional_messages: question('What is a spring tide?') });
    const stalled = await ask('Never finish [sim:stall]');
    expect(stalled.status).to.equal('in_progress');
    const busy = await ask('And a neap tide?').catch((e: unknown) => e);
    expect([busy instanceof APIError, (busy as APIError).code], 'a chat runs in the conversation').to.deep.equal([true, 4016]);

    const cancelled = await client.chat.cancel(conversation.id, stalled.id);
    expect([cancelled.id, cancelled.status]).to.deep.equal([stalled.id, 'canceled']);
    expect((await client.chat.retrieve(conversation.id, stalled.id)).status).to.equal('canceled');
    const next = await client.chat.createAndPoll({ bot_id: 'webqa-pro', user_id: 'u-3', conversation_id: conversation.id, additional_messages: question('And a neap tide?') });
    expect(next.messages!.find((m) => m.type === 'answer')!.content, 'the cancelled question is not remembered').to.equal('webqa-pro answers: And a neap tide? (earlier in this conversation you asked: "What is a spring tide?")');
    const again = await client.chat.cancel(conversation.id, next.chat.id).catch((e: unknown) => e);
    expect([again instanceof APIError, (again as APIError).code], 'a completed chat is not cancelled').to.deep.equal([true, 4000]);
  });

  it("answers Coze's codes as the SDK reads them: a wrong token, an unknown bot, a conversation that does not exist", async () => {
    const stranger = new CozeAPI({ token: 'pat_not-the-placeholder', baseURL: `${sim.url}/coze` });
    const refusals = [
      await stranger.chat.create({ bot_id: 'webqa-pro', user_id: 'u', additional_messages: question('hi') }).catch((e: unknown) => e),
      await client.chat.create({ bot_id: '7000000000000000000', user_id: 'u', additional_messages: question('hi') }).catch((e: unknown) => e),
      await client.chat.create({ bot_id: 'webqa-pro', user_id: 'u', conversation_id: '7000000000000000001', additional_messages: question('hi') }).catch((e: unknown) => e),
    ];
    expect(refusals.map((e) => [e instanceof APIError, e instanceof AuthenticationError, (e as APIError).code])).to.deep.equal([
      [true, true, 4100],
      [true, false, 4006],
      [true, false, 4002],
    ]);
  });
});
