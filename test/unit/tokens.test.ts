import { expect } from 'chai';
import { CatalogError, DEFAULT_CATALOG_FILE, parseCatalog, validateCatalog } from '../../src/billing/catalog';
import { countChatPromptTokens, countContentTokens, countInSlices, countMessageTokens, countResponsesInputTokens, countTokens, MAX_BPE_RUN, TOKENIZER_ENCODINGS } from '../../src/billing/tokens';
import fs from 'node:fs';
import { ALL_MODEL_TYPES } from '../../src/model-types';

const CODE = 'const total = items.reduce((sum, item) => sum + item.price * item.quantity, 0);';

describe('token counting: the catalog tokenizer, else the simple count', () => {
  it('counts by the simple rule when no encoding is named: words, and one token per CJK character', () => {
    expect(countTokens('Hello, world!')).to.equal(2);
    expect(countTokens('会议 notes')).to.equal(3);
    expect(countTokens(CODE)).to.equal(CODE.split(/\s+/).length);
  });

  it('counts with the BPE encoding a model names, as OpenAI tokenizers do', () => {
    // "Hello" "," " world" "!" in both encodings (tiktoken's reference counts).
    expect(countTokens('Hello, world!', 'o200k_base')).to.equal(4);
    expect(countTokens('Hello, world!', 'cl100k_base')).to.equal(4);
    // Code splits into far more tokens than words: the simple count undercounts it.
    for (const encoding of TOKENIZER_ENCODINGS) expect(countTokens(CODE, encoding), encoding).to.be.greaterThan(countTokens(CODE) * 1.5);
    expect(countTokens('', 'o200k_base')).to.equal(0);
  });

  it('counts special-token text in user input as plain text instead of refusing it', () => {
    for (const encoding of TOKENIZER_ENCODINGS) expect(countTokens('say <|endoftext|> twice', encoding), encoding).to.be.greaterThan(4);
  });

  it('adds the same per-message and reply overheads whichever the count', () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: CODE },
    ];
    for (const encoding of [undefined, ...TOKENIZER_ENCODINGS]) {
      const expected = 2 + messages.reduce((n, m) => n + countTokens(m.content, encoding) + 4, 0);
      expect(countMessageTokens(messages, encoding), String(encoding)).to.equal(expected);
    }
    const input = [{ role: 'user', content: [{ type: 'input_text', text: CODE }] }, { type: 'function_call_output', output: 'Hello, world!' }];
    expect(countResponsesInputTokens(input, 'o200k_base')).to.equal(2 + 4 + countTokens(CODE, 'o200k_base') + 4 + 4);
    expect(countResponsesInputTokens(CODE, 'cl100k_base')).to.equal(2 + 4 + countTokens(CODE, 'cl100k_base'));
  });
});

describe('token counting: content parts and tools (one rule for the gateway and the simulator)', () => {
  const PARTS = { image: 700, audio: 1100, file: 3300 };

  it('counts string content exactly as countTokens, and string messages exactly as countMessageTokens', () => {
    for (const encoding of [undefined, ...TOKENIZER_ENCODINGS]) {
      expect(countContentTokens(CODE, PARTS, encoding), String(encoding)).to.equal(countTokens(CODE, encoding));
      const messages = [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: CODE },
      ];
      expect(countChatPromptTokens({ messages }, encoding, PARTS), String(encoding)).to.equal(countMessageTokens(messages, encoding));
    }
  });

  it('counts text parts by the text rule and each image, audio and file part (chat or Responses) at its fixed count', () => {
    const chatParts = [
      { type: 'text', text: 'two words' },
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
      { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
      { type: 'file', file: { file_id: 'file-1' } },
      { type: 'image_url', image_url: { url: 'https://example.com/b.png' } },
    ];
    expect(countContentTokens(chatParts, PARTS)).to.equal(2 + 700 * 2 + 1100 + 3300);
    const responsesParts = [
      { type: 'input_text', text: 'three more words' },
      { type: 'input_image', image_url: 'https://example.com/a.png' },
      { type: 'input_file', file_id: 'file-1' },
    ];
    expect(countContentTokens(responsesParts, PARTS)).to.equal(3 + 700 + 3300);
    expect(countResponsesInputTokens([{ role: 'user', content: responsesParts }], undefined, PARTS)).to.equal(2 + 4 + 3 + 700 + 3300);
    // Without part counts a Responses input counts its text alone, as before parts were taken.
    expect(countResponsesInputTokens([{ role: 'user', content: responsesParts }])).to.equal(2 + 4 + 3);
  });

  it('counts tool definitions as their JSON, and tool calls and legacy function calls by their names and arguments', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } } };
    const tools = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters } }];
    const messages = [
      { role: 'user', content: 'weather in Paris' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{}' } },
    ];
    expect(countChatPromptTokens({ messages, tools }, undefined, PARTS)).to.equal(2 + (3 + 4) + (0 + 1 + 2 + 4) + (1 + 4) + (0 + 1 + 1 + 4) + countTokens(JSON.stringify(tools)));
    const functions = [{ name: 'get_weather', description: 'The weather in a city', parameters }];
    expect(countChatPromptTokens({ messages: [], functions }, undefined, PARTS)).to.equal(2 + countTokens(JSON.stringify(functions)));
    expect(countResponsesInputTokens([{ type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city": "Paris"}' }])).to.equal(2 + 4 + 1 + 2);
  });
});

describe('token counting: long runs counted in slices (BPE merges are quadratic in a piece)', () => {
  /** The texts a counter was given, each counted as its length. */
  const recorded = (text: string) => {
    const calls: string[] = [];
    const total = countInSlices(text, (slice) => (calls.push(slice), slice.length));
    return { calls, total };
  };
  /** The longest run of whitespace, or of other characters, in `text`. */
  const longestRun = (text: string) => Math.max(...(text.match(/\s+|\S+/g) ?? ['']).map((run) => run.length));
  const hanRun = (n: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join('');

  it('gives the counter text without a longer run whole, as it is', () => {
    const text = `${'word '.repeat(3000)}${'x'.repeat(MAX_BPE_RUN)}${' '.repeat(MAX_BPE_RUN)}end`;
    const { calls, total } = recorded(text);
    expect(calls).to.deep.equal([text]);
    expect(total).to.equal(text.length);
  });

  it('cuts longer runs of either kind into slices, losing nothing and splitting no surrogate pair', () => {
    const text = `intro ${hanRun(2 * MAX_BPE_RUN + 17)} middle${' '.repeat(MAX_BPE_RUN + 3)}${'😀'.repeat(MAX_BPE_RUN)} tail`;
    const { calls, total } = recorded(text);
    expect(calls.join('')).to.equal(text);
    expect(total).to.equal(text.length);
    expect(calls.length).to.be.greaterThan(4);
    for (const slice of calls) {
      expect(longestRun(slice)).to.be.at.most(MAX_BPE_RUN + 1);
      expect(slice.charCodeAt(0) >= 0xdc00 && slice.charCodeAt(0) <= 0xdfff, 'a slice starting with a low surrogate').to.equal(false);
    }
  });

  it('counts text without long runs exactly as the encoding does, and a long run within a token a slice', () => {
    const encoder = require('gpt-tokenizer/encoding/o200k_base') as { countTokens: (text: string, options: object) => number };
    const whole = (text: string) => encoder.countTokens(text, { disallowedSpecial: new Set() });
    const prose = `${CODE} 会议纪要 `.repeat(200);
    expect(countTokens(prose, 'o200k_base')).to.equal(whole(prose));
    const run = hanRun(3 * MAX_BPE_RUN);
    expect(Math.abs(countTokens(run, 'o200k_base') - whole(run))).to.be.at.most(3);
    // Whitespace shows the slices: 1,000 spaces are 9 tokens whole, 3,000 are 24.
    const spaces = ' '.repeat(3 * MAX_BPE_RUN);
    expect(whole(spaces)).to.not.equal(3 * whole(' '.repeat(MAX_BPE_RUN)));
    expect(countTokens(spaces, 'o200k_base')).to.equal(3 * whole(' '.repeat(MAX_BPE_RUN)));
  });
});

describe('catalog: a model\'s tokenizer', () => {
  const model = (extra: Record<string, unknown>) => ({
    models: [{ id: 'm', type: 'chat-like', channel: 'default', owned_by: 'gateway', created: 0, pricing: {}, capabilities: {}, ...extra }],
  });

  it('accepts the encodings gpt-tokenizer bundles and refuses any other', () => {
    expect(validateCatalog(model({ tokenizer: 'o200k_base' }), 't', ALL_MODEL_TYPES)[0]!.tokenizer).to.equal('o200k_base');
    expect(validateCatalog(model({ tokenizer: 'cl100k_base' }), 't', ALL_MODEL_TYPES)[0]!.tokenizer).to.equal('cl100k_base');
    expect(validateCatalog(model({}), 't', ALL_MODEL_TYPES)[0]!.tokenizer).to.equal(undefined);
    expect(() => validateCatalog(model({ tokenizer: 'p50k_base' }), 't', ALL_MODEL_TYPES)).to.throw(CatalogError, /tokenizer/);
    expect(() => validateCatalog(model({ tokenizer: 7 }), 't', ALL_MODEL_TYPES)).to.throw(CatalogError, /tokenizer/);
  });

  it('names a tokenizer for every chat model of the built-in catalog', () => {
    const chat = parseCatalog(fs.readFileSync(DEFAULT_CATALOG_FILE, 'utf8'), DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES).filter((m) => m.type === 'chat');
    expect(chat).to.not.be.empty;
    for (const m of chat) expect(TOKENIZER_ENCODINGS, m.id).to.include(m.tokenizer);
  });
});
