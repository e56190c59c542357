import { expect } from 'chai';
import { CatalogError, DEFAULT_CATALOG_FILE, parseCatalog, validateCatalog } from '../../src/billing/catalog';
import { countMessageTokens, countResponsesInputTokens, countTokens, TOKENIZER_ENCODINGS } from '../../src/billing/tokens';
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
