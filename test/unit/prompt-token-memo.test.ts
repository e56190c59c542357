import { expect } from 'chai';
import { PromptTokenMemo } from '../../src/billing/prompt-token-memo';
import { countMessageTokens, countResponsesInputTokens, countTokens } from '../../src/billing/tokens';

const CODE = 'const total = items.reduce((sum, item) => sum + item.price * item.quantity, 0);';

describe('prompt token memo: the counts of texts an account sent before', () => {
  it('counts as the encoding does, and counts a text the account sent before from memory', () => {
    const memo = new PromptTokenMemo();
    const count = memo.counter('acct_a', 'o200k_base');
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: CODE },
    ];
    expect(countMessageTokens(messages, count)).to.equal(countMessageTokens(messages, 'o200k_base'));
    expect(memo.stats()).to.include({ entries: 2, hits: 0, misses: 2 });
    // The next turn sends the conversation again, with one message more: only that one is counted.
    const next = [...messages, { role: 'assistant', content: 'Sums the prices.' }];
    expect(countMessageTokens(next, count)).to.equal(countMessageTokens(next, 'o200k_base'));
    expect(memo.stats()).to.include({ entries: 3, hits: 2, misses: 3 });
    const input = [{ role: 'user', content: [{ type: 'input_text', text: CODE }] }];
    expect(countResponsesInputTokens(input, count)).to.equal(countResponsesInputTokens(input, 'o200k_base'));
    expect(memo.stats()).to.include({ hits: 3, misses: 3 });
  });

  it('never serves one account a count another account\'s text left, nor one encoding another\'s', () => {
    const memo = new PromptTokenMemo();
    memo.counter('acct_a', 'o200k_base')(CODE);
    expect(memo.counter('acct_b', 'o200k_base')(CODE)).to.equal(countTokens(CODE, 'o200k_base'));
    expect(memo.counter('acct_a', 'cl100k_base')(CODE)).to.equal(countTokens(CODE, 'cl100k_base'));
    expect(memo.stats()).to.include({ entries: 3, hits: 0, misses: 3 });
  });

  it('keeps no more characters than its bound, the least recently used going first', () => {
    const texts = Array.from({ length: 9 }, (_, i) => `${String(i).repeat(80)} ${CODE}`);
    const keyChars = 'o200k_base'.length + 'acct_a'.length + 2 + texts[0]!.length;
    // Room for eight of them (each within the eighth of the bound a kept text may take), not nine.
    const memo = new PromptTokenMemo(keyChars * 8 + 10);
    const count = memo.counter('acct_a', 'o200k_base');
    for (const text of texts.slice(0, 8)) count(text);
    expect(memo.stats()).to.include({ entries: 8, chars: keyChars * 8 });
    count(texts[0]!); // used again: now the most recent
    count(texts[8]!);
    expect(memo.stats()).to.include({ entries: 8, chars: keyChars * 8 });
    const before = memo.stats();
    expect(count(texts[0]!)).to.equal(countTokens(texts[0]!, 'o200k_base'));
    expect(memo.stats().hits, 'the text used again outlived older ones').to.equal(before.hits + 1);
    count(texts[1]!);
    expect(memo.stats().misses, 'the least recently used text went first').to.equal(before.misses + 1);
  });

  it('counts a text longer than an eighth of its bound without keeping it, and keeps nothing for the simple count', () => {
    const memo = new PromptTokenMemo(800);
    const long = CODE.repeat(2);
    expect(memo.counter('acct_a', 'o200k_base')(long)).to.equal(countTokens(long, 'o200k_base'));
    expect(memo.counter('acct_a', undefined)(CODE)).to.equal(countTokens(CODE));
    expect(memo.stats()).to.include({ entries: 0, chars: 0 });
  });
});
