import { expect } from 'chai';
import { OpenAI, BadRequestError, InternalServerError, NotFoundError, RateLimitError } from 'openai';
import { countMessageTokens, countTokens } from '../../src/billing/tokens';
import { createSimulator, type Simulator } from '../../simulator/server';
import { sendJson } from '../../simulator/http';

describe('upstream simulator: chat protocol (through the openai SDK)', () => {
  let sim: Simulator;
  let url: string;
  let client: OpenAI;

  before(async () => {
    sim = createSimulator({
      routes: [
        {
          method: 'GET',
          path: '/v1/things/:id',
          handler: ({ res, params, query }) => sendJson(res, 200, { id: params['id'], q: query.get('q') }),
        },
      ],
    });
    url = await sim.listen(0);
    // No retries: an error directive must surface as exactly one SDK error.
    client = new OpenAI({ apiKey: 'x', baseURL: `${url}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await sim.close();
  });

  describe('chat completions', () => {
    it('answers exactly N tokens with [sim:tokens=N], usage matching countMessageTokens', async () => {
      const messages = [
        { role: 'system' as const, content: 'You are terse.' },
        { role: 'user' as const, content: 'Tell me a story [sim:tokens=7]' },
      ];
      const completion = await client.chat.completions.create({ model: 'sim-chat', messages });
      const text = completion.choices[0]!.message.content ?? '';
      expect(completion.id).to.match(/^chatcmpl-sim-\d+$/);
      expect(completion.object).to.equal('chat.completion');
      expect(completion.model).to.equal('sim-chat');
      expect(completion.choices[0]!.finish_reason).to.equal('stop');
      expect(countTokens(text)).to.equal(7);
      expect(completion.usage).to.deep.equal({
        prompt_tokens: countMessageTokens(messages),
        completion_tokens: 7,
        total_tokens: countMessageTokens(messages) + 7,
      });
    });

    it('answers deterministically from the prompt without directives', async () => {
      const ask = () => client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'What is the capital of France, please tell me now' }] });
      const [a, b] = await Promise.all([ask(), ask()]);
      expect(a.choices[0]!.message.content).to.equal('Simulated answer to: What is the capital of France, please tell');
      expect(b.choices[0]!.message.content).to.equal(a.choices[0]!.message.content);
      expect(b.usage).to.deep.equal(a.usage);
    });

    it('streams the same text, then a usage chunk, with include_usage', async () => {
      const messages = [{ role: 'user' as const, content: 'Stream it [sim:tokens=5]' }];
      const plain = await client.chat.completions.create({ model: 'm', messages });
      const stream = await client.chat.completions.create({ model: 'm', messages, stream: true, stream_options: { include_usage: true } });
      let text = '';
      let deltas = 0;
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | null | undefined;
      const ids = new Set<string>();
      for await (const chunk of stream) {
        ids.add(chunk.id);
        expect(chunk.object).to.equal('chat.completion.chunk');
        const choice = chunk.choices[0];
        if (choice?.delta.content) {
          text += choice.delta.content;
          deltas++;
        }
        if (choice?.finish_reason) finish = choice.finish_reason;
        if (chunk.choices.length === 0) usage = chunk.usage;
      }
      expect(ids.size).to.equal(1);
      expect(text).to.equal(plain.choices[0]!.message.content);
      expect(deltas).to.equal(5);
      expect(finish).to.equal('stop');
      expect(usage).to.deep.equal(plain.usage);
    });

    it('truncates at max_tokens with finish_reason length', async () => {
      const completion = await client.chat.completions.create({
        model: 'm',
        max_tokens: 3,
        messages: [{ role: 'user', content: '[sim:tokens=10]' }],
      });
      expect(completion.choices[0]!.message.content).to.equal('word1 word2 word3');
      expect(completion.choices[0]!.finish_reason).to.equal('length');
      expect(completion.usage!.completion_tokens).to.equal(3);
    });

    it('reads directives from the last user message only', async () => {
      const completion = await client.chat.completions.create({
        model: 'm',
        messages: [
          { role: 'user', content: '[sim:fail]' },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: 'again [sim:tokens=2]' },
        ],
      });
      expect(completion.usage!.completion_tokens).to.equal(2);
    });

    it('raises RateLimitError for [sim:status=429] and InternalServerError for [sim:fail]', async () => {
      const limited = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'hi [sim:status=429]' }] })
        .catch((err: unknown) => err);
      expect(limited).to.be.instanceOf(RateLimitError);
      expect((limited as RateLimitError).error).to.deep.include({ type: 'invalid_request_error', param: null, code: 'rate_limit_exceeded' });

      const failed = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: '[sim:fail]' }], stream: true })
        .catch((err: unknown) => err);
      expect(failed).to.be.instanceOf(InternalServerError);
      expect((failed as InternalServerError).status).to.equal(500);
    });

    it('rejects a request without model or messages with 400', async () => {
      const noMessages = await client.chat.completions.create({ model: 'm', messages: [] }).catch((err: unknown) => err);
      expect(noMessages).to.be.instanceOf(BadRequestError);
      const noModel = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }) });
      expect(noModel.status).to.equal(400);
      expect(await noModel.json()).to.have.nested.property('error.param', 'model');
    });

    it('waits [sim:delay=MS] before answering', async () => {
      const started = Date.now();
      await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: '[sim:delay=120]' }] });
      expect(Date.now() - started).to.be.at.least(110);
    });

    it('reports no usage with [sim:no-usage], plain and streamed (include_usage ignored)', async () => {
      const messages = [{ role: 'user' as const, content: 'Quiet [sim:tokens=4] [sim:no-usage]' }];
      const plain = await client.chat.completions.create({ model: 'm', messages });
      expect(plain.choices[0]!.message.content).to.equal('word1 word2 word3 word4');
      expect(plain).to.not.have.property('usage');

      const stream = await client.chat.completions.create({ model: 'm', messages, stream: true, stream_options: { include_usage: true } });
      let text = '';
      let chunks = 0;
      for await (const chunk of stream) {
        chunks++;
        expect(chunk.choices).to.have.length(1);
        expect(chunk).to.not.have.property('usage');
        text += chunk.choices[0]!.delta.content ?? '';
      }
      expect(chunks).to.equal(1 + 4 + 1); // role, four tokens, finish: no usage chunk
      expect(text).to.equal('word1 word2 word3 word4');
    });

    it('reports the usage of [sim:usage=P,C] whatever the text, plain and streamed', async () => {
      const messages = [{ role: 'user' as const, content: 'Claim [sim:tokens=6] [sim:usage=40,2]' }];
      const plain = await client.chat.completions.create({ model: 'm', messages });
      expect(countTokens(plain.choices[0]!.message.content ?? '')).to.equal(6);
      expect(plain.usage).to.deep.equal({ prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 });

      const stream = await client.chat.completions.create({ model: 'm', messages, stream: true, stream_options: { include_usage: true } });
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) if (chunk.choices.length === 0) usage = chunk.usage;
      expect(usage).to.deep.equal({ prompt_tokens: 40, completion_tokens: 2, total_tokens: 42 });
    });

    it('stalls after two deltas with [sim:stall]; aborting frees the client and the server lives on', async () => {
      const controller = new AbortController();
      const stream = await client.chat.completions.create(
        { model: 'm', stream: true, messages: [{ role: 'user', content: '[sim:stall] [sim:tokens=50]' }] },
        { signal: controller.signal },
      );
      const deltas: string[] = [];
      const consumed = (async () => {
        for await (const chunk of stream) {
          const content = chunk.choices[0]?.delta.content;
          if (content) deltas.push(content);
          if (deltas.length === 2) setTimeout(() => controller.abort(), 50);
        }
      })().catch((err: unknown) => err);
      const outcome = await consumed;
      // The SDK ends an aborted stream's iteration quietly (or with an abort error): either way,
      // it ended only because of the abort, after exactly the two deltas the stall allows.
      if (outcome !== undefined) expect(outcome).to.be.instanceOf(Error);
      expect(controller.signal.aborted).to.equal(true);
      expect(deltas).to.deep.equal(['word1', ' word2']);

      const after = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'still there?' }] });
      expect(after.choices[0]!.message.content).to.equal('Simulated answer to: still there?');
    });

    it('paces a stream with [sim:pace=MS]: each token after the first MS after the one before, usage and [DONE] as usual', async () => {
      const paceMs = 40;
      const started = performance.now();
      const stream = await client.chat.completions.create({
        model: 'm',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: `slowly [sim:tokens=4] [sim:pace=${paceMs}]` }],
      });
      const deltas: string[] = [];
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        const content = chunk.choices[0]?.delta.content;
        if (content) deltas.push(content);
        if (chunk.choices.length === 0) usage = chunk.usage;
      }
      // A lower bound only: three waits of paceMs lie between the first token and the last.
      expect(performance.now() - started).to.be.at.least(3 * paceMs - 3);
      expect(deltas).to.deep.equal(['word1', ' word2', ' word3', ' word4']);
      expect(usage?.completion_tokens).to.equal(4);
    });

    it('ends the wait of a paced stream when the client leaves', async () => {
      const controller = new AbortController();
      const stream = await client.chat.completions.create(
        { model: 'm', stream: true, messages: [{ role: 'user', content: '[sim:tokens=5] [sim:pace=600000]' }] },
        { signal: controller.signal },
      );
      const deltas: string[] = [];
      const outcome = await (async () => {
        for await (const chunk of stream) {
          const content = chunk.choices[0]?.delta.content;
          if (content) deltas.push(content);
          if (deltas.length === 1) controller.abort();
        }
      })().catch((err: unknown) => err);
      if (outcome !== undefined) expect(outcome).to.be.instanceOf(Error);
      expect(deltas).to.deep.equal(['word1']);
    });

    it('closes with a paced stream open: its wait ends with the connection', async () => {
      const other = createSimulator();
      const otherUrl = await other.listen();
      const res = await fetch(`${otherUrl}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: '[sim:tokens=5] [sim:pace=600000]' }] }),
      });
      const reader = res.body!.getReader();
      expect((await reader.read()).done).to.equal(false);
      // A ten-minute wait that outlived the connection would hold this past the test's timeout.
      await other.close();
      await reader.cancel().catch(() => undefined);
    });
  });

  describe('responses', () => {
    const input = [
      { role: 'developer' as const, content: 'Be brief.' },
      { role: 'user' as const, content: [{ type: 'input_text' as const, text: 'Describe the sea [sim:tokens=6]' }] },
    ];
    const expectedInputTokens = countTokens('Be brief.') + 4 + countTokens('Describe the sea [sim:tokens=6]') + 4 + 2;

    it('answers responses.create with usage and text', async () => {
      const response = await client.responses.create({ model: 'sim-resp', input });
      expect(response.id).to.match(/^resp_sim_\d+$/);
      expect(response.status).to.equal('completed');
      expect(response.output_text).to.equal('word1 word2 word3 word4 word5 word6');
      expect(response.usage).to.deep.equal({
        input_tokens: expectedInputTokens,
        input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        output_tokens: 6,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: expectedInputTokens + 6,
      });
    });

    it('counts a string input as one item', async () => {
      const response = await client.responses.create({ model: 'm', input: 'hello world' });
      expect(response.usage!.input_tokens).to.equal(2 + 4 + 2);
      expect(response.output_text).to.equal('Simulated answer to: hello world');
    });

    it('streams through the strict responses.stream() helper to the same response', async () => {
      const plain = await client.responses.create({ model: 'm', input });
      const stream = client.responses.stream({ model: 'm', input });
      const types: string[] = [];
      const sequence: number[] = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        sequence.push(event.sequence_number);
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
      const final = await stream.finalResponse();
      expect(types[0]).to.equal('response.created');
      expect(types.at(-1)).to.equal('response.completed');
      expect(types.filter((t) => t === 'response.output_text.delta')).to.have.length(6);
      expect(sequence).to.deep.equal(types.map((_, i) => i));
      expect(text).to.equal(plain.output_text);
      expect(final.output_text).to.equal(plain.output_text);
      expect(final.usage).to.deep.equal(plain.usage);
      expect(final.status).to.equal('completed');
    });

    it('ends incomplete at max_output_tokens', async () => {
      const plain = await client.responses.create({ model: 'm', input: '[sim:tokens=9]', max_output_tokens: 4 });
      expect(plain.status).to.equal('incomplete');
      expect(plain.incomplete_details).to.deep.equal({ reason: 'max_output_tokens' });
      expect(plain.output_text).to.equal('word1 word2 word3 word4');

      const stream = client.responses.stream({ model: 'm', input: '[sim:tokens=9]', max_output_tokens: 4 });
      const final = await stream.finalResponse();
      expect(final.status).to.equal('incomplete');
      expect(final.output_text).to.equal('word1 word2 word3 word4');
      expect(final.usage!.output_tokens).to.equal(4);
    });

    it('answers 404 with [sim:no-responses], as an upstream without the interface', async () => {
      const err = await client.responses.create({ model: 'm', input: 'hi [sim:no-responses]' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(NotFoundError);
      // Chat is unaffected by the directive.
      const chat = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi [sim:no-responses]' }] });
      expect(chat.choices[0]!.message.content).to.equal('Simulated answer to: hi');
    });

    it('reports usage null with [sim:no-usage], plain and on the streamed terminal event', async () => {
      const plain = await client.responses.create({ model: 'm', input: '[sim:tokens=3] [sim:no-usage]' });
      expect(plain.status).to.equal('completed');
      expect(plain.output_text).to.equal('word1 word2 word3');
      expect(plain.usage ?? null).to.equal(null);

      const stream = client.responses.stream({ model: 'm', input: '[sim:tokens=3] [sim:no-usage]' });
      const final = await stream.finalResponse();
      expect(final.output_text).to.equal('word1 word2 word3');
      expect(final.usage ?? null).to.equal(null);
    });

    it('reports the usage of [sim:usage=P,C] whatever the text, plain and streamed', async () => {
      const expected = { input_tokens: 11, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 1, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 12 };
      const plain = await client.responses.create({ model: 'm', input: '[sim:tokens=5] [sim:usage=11,1]' });
      expect(plain.output_text.split(' ')).to.have.length(5);
      expect(plain.usage).to.deep.equal(expected);
      const final = await client.responses.stream({ model: 'm', input: '[sim:tokens=5] [sim:usage=11,1]' }).finalResponse();
      expect(final.usage).to.deep.equal(expected);
    });

    it('raises RateLimitError for [sim:status=429]', async () => {
      const err = await client.responses.create({ model: 'm', input: '[sim:status=429]' }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(RateLimitError);
    });

    it('paces a stream with [sim:pace=MS]: each delta after the first MS after the one before', async () => {
      const paceMs = 40;
      const started = performance.now();
      const stream = client.responses.stream({ model: 'm', input: `slowly [sim:tokens=3] [sim:pace=${paceMs}]` });
      let deltas = 0;
      for await (const event of stream) if (event.type === 'response.output_text.delta') deltas++;
      const response = await stream.finalResponse();
      expect(performance.now() - started).to.be.at.least(2 * paceMs - 3);
      expect(deltas).to.equal(3);
      expect(response.output_text).to.equal('word1 word2 word3');
    });

    it('stalls a stream after two deltas; aborting ends it', async () => {
      const controller = new AbortController();
      const stream = client.responses.stream({ model: 'm', input: '[sim:stall] [sim:tokens=20]' }, { signal: controller.signal });
      let deltas = 0;
      const outcome = await (async () => {
        for await (const event of stream) {
          if (event.type === 'response.output_text.delta' && ++deltas === 2) setTimeout(() => controller.abort(), 50);
        }
      })().catch((err: unknown) => err);
      expect(outcome).to.be.instanceOf(Error); // the helper reports the abort as APIUserAbortError
      expect(deltas).to.equal(2);
      const after = await client.responses.create({ model: 'm', input: 'alive' });
      expect(after.status).to.equal('completed');
    });
  });

  describe('server', () => {
    it('answers unknown paths with a 404 JSON error', async () => {
      const res = await fetch(`${url}/v1/unknown`, { method: 'POST', body: '{}' });
      expect(res.status).to.equal(404);
      expect(await res.json()).to.deep.equal({
        error: { message: 'Invalid URL (POST /v1/unknown)', type: 'invalid_request_error', param: null, code: null },
      });
    });

    it('serves extra routes with path params and query', async () => {
      const res = await fetch(`${url}/v1/things/a%20b?q=1`);
      expect(await res.json()).to.deep.equal({ id: 'a b', q: '1' });
    });

    it('adds routes after listening', async () => {
      sim.addRoute({ method: 'POST', path: '/v1/echo', handler: ({ res, body }) => sendJson(res, 201, { body }) });
      const res = await fetch(`${url}/v1/echo`, { method: 'POST', body: '{"a":1}' });
      expect(res.status).to.equal(201);
      expect(await res.json()).to.deep.equal({ body: { a: 1 } });
    });

    it('answers malformed JSON with 400 and oversized bodies with 413', async () => {
      const bad = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{nope' });
      expect(bad.status).to.equal(400);
      const big = await fetch(`${url}/v1/chat/completions`, { method: 'POST', body: 'x'.repeat(10 * 1024 * 1024 + 1) });
      expect(big.status).to.equal(413);
    });

    it('closes at once even with a stalled stream open', async () => {
      const other = createSimulator();
      const otherUrl = await other.listen();
      const controller = new AbortController();
      const res = await fetch(`${otherUrl}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: '[sim:stall]' }] }),
        signal: controller.signal,
      });
      expect(res.status).to.equal(200);
      const started = Date.now();
      await other.close();
      expect(Date.now() - started).to.be.below(1000);
      controller.abort();
    });
  });
});
