import { expect } from 'chai';
import { parseDirectives, stripDirectives } from '../../simulator/directives';
import { countMessageTokens, countTokens, splitTokens } from '../../src/billing/tokens';

describe('upstream simulator: directives', () => {
  it('finds nothing in a plain prompt', () => {
    const d = parseDirectives('just a question');
    expect(d).to.deep.include({ fail: false, stall: false, noResponses: false, noUsage: false });
    expect([d.tokens, d.status, d.delayMs, d.usage, d.retryAfter, d.streamError]).to.deep.equal([undefined, undefined, undefined, undefined, undefined, undefined]);
    expect(Object.keys(d.raw)).to.deep.equal([]);
  });

  it('parses every known directive anywhere in the text', () => {
    const d = parseDirectives('a [sim:tokens=12] b[sim:fail]c [sim:status=503]\n[sim:delay=250] [sim:stall] [sim:no-responses] [sim:no-usage] [sim:usage=30,7]');
    expect(d.tokens).to.equal(12);
    expect(d.fail).to.equal(true);
    expect(d.status).to.equal(503);
    expect(d.delayMs).to.equal(250);
    expect(parseDirectives('[sim:pace=1000]').paceMs).to.equal(1000);
    expect(parseDirectives('[sim:pace=-1] [sim:pace]').paceMs).to.equal(undefined);
    expect(d.stall).to.equal(true);
    expect(d.noResponses).to.equal(true);
    expect(d.noUsage).to.equal(true);
    expect(d.usage).to.deep.equal({ prompt: 30, completion: 7 });
  });

  it('takes [sim:retry-after=V] and [sim:stream-error=CODE] as written, and neither without a value', () => {
    expect(parseDirectives('[sim:status=429] [sim:retry-after=17] [sim:stream-error=server_overloaded]')).to.deep.include({ retryAfter: '17', streamError: 'server_overloaded' });
    expect(parseDirectives('[sim:retry-after] [sim:stream-error=]')).to.deep.include({ retryAfter: undefined, streamError: undefined });
  });

  it('parses [sim:usage=P,C] as two token counts and ignores malformed pairs', () => {
    expect(parseDirectives('[sim:usage=0,0]').usage).to.deep.equal({ prompt: 0, completion: 0 });
    expect(parseDirectives('[sim:usage=1000000,1]').usage).to.deep.equal({ prompt: 1_000_000, completion: 1 });
    for (const bad of ['[sim:usage]', '[sim:usage=5]', '[sim:usage=5,]', '[sim:usage=,5]', '[sim:usage=1,2,3]', '[sim:usage=a,b]', '[sim:usage=-1,2]', '[sim:usage=1000001,2]']) {
      expect(parseDirectives(bad).usage, bad).to.equal(undefined);
    }
    expect(parseDirectives('[sim:usage=1,2] [sim:usage=3,4]').usage).to.deep.equal({ prompt: 3, completion: 4 });
  });

  it('keeps unknown directives in raw only, values as strings and flags as true', () => {
    const d = parseDirectives('[sim:video-seconds=8] [sim:Blurry] [sim:size=1024x1024] [sim:tokens=3]');
    expect({ ...d.raw }).to.deep.equal({ 'video-seconds': '8', blurry: true, size: '1024x1024', tokens: '3' });
  });

  it('ignores malformed values and lets the last occurrence win', () => {
    expect(parseDirectives('[sim:tokens=abc]').tokens).to.equal(undefined);
    expect(parseDirectives('[sim:tokens=-1]').tokens).to.equal(undefined);
    expect(parseDirectives('[sim:status=200]').status).to.equal(undefined);
    expect(parseDirectives('[sim:status=700]').status).to.equal(undefined);
    expect(parseDirectives('[sim:tokens=2] [sim:tokens=5]').tokens).to.equal(5);
    expect(parseDirectives('[sim:tokens=0]').tokens).to.equal(0);
    expect(parseDirectives('[sim: tokens=3] [sim:tokens = 3] [simtokens=3]').tokens).to.equal(undefined);
  });

  it('treats __proto__ as plain data', () => {
    const d = parseDirectives('[sim:__proto__=x]');
    expect(d.raw['__proto__']).to.equal('x');
    expect(({} as Record<string, unknown>)['x']).to.equal(undefined);
  });

  it('strips directives from text', () => {
    expect(stripDirectives('hello [sim:tokens=3] world').split(/\s+/)).to.deep.equal(['hello', 'world']);
    expect(stripDirectives('a [sim:tool-args={"x": "] y"}] b [sim:refusal] c').split(/\s+/)).to.deep.equal(['a', 'b', 'c']);
  });

  it('parses the tool, usage-detail and built-in tool directives', () => {
    const d = parseDirectives('[sim:tool=get_weather,get_time] [sim:refusal] [sim:cached=12] [sim:reasoning=30] [sim:web-search=2] [sim:image-generation=1]');
    expect(d).to.deep.include({ tools: ['get_weather', 'get_time'], refusal: true, cached: 12, reasoning: 30, webSearch: 2, imageGeneration: 1 });
    expect(parseDirectives('[sim:web-search=17]').webSearch, 'at most 16 calls').to.equal(undefined);
    expect(parseDirectives('[sim:tool=]').tools).to.equal(undefined);
  });

  it('reads [sim:tool-args=…] as a JSON object to its balanced brace, spaces, brackets and braces in strings included', () => {
    const args = { city: 'Paris ] {', days: [1, 2], nested: { ok: true, quote: 'say "hi"' } };
    const d = parseDirectives(`weather? [sim:tool=get_weather] [sim:tool-args=${JSON.stringify(args, null, 2)}] thanks`);
    expect(d.toolArgs).to.deep.equal(args);
    expect(d.tools).to.deep.equal(['get_weather']);
    for (const bad of ['[sim:tool-args={"a": 1]', '[sim:tool-args={"a": 1}x]', '[sim:tool-args=[1, 2]]', '[sim:tool-args={a: 1}]', '[sim:tool-args=1]']) {
      expect(parseDirectives(bad).toolArgs, bad).to.equal(undefined);
    }
  });
});

describe('upstream simulator: tokens', () => {
  it('counts whitespace-separated words', () => {
    expect(countTokens('')).to.equal(0);
    expect(countTokens('   \n\t ')).to.equal(0);
    expect(countTokens('hello')).to.equal(1);
    expect(countTokens('  hello,   world!\n  ok ')).to.equal(3);
    expect(countTokens('a\u00a0b\u3000c')).to.equal(3); // no-break and ideographic spaces split
  });

  it('counts one token per CJK character', () => {
    expect(countTokens('你好世界')).to.equal(4);
    expect(countTokens('hello世界 ok')).to.equal(4); // "hello", 世, 界, "ok"
    expect(countTokens('こんにちは')).to.equal(5);
    expect(countTokens('안녕')).to.equal(2);
    expect(countTokens('𠀀𠀁')).to.equal(2); // extension B, surrogate pairs
    expect(countTokens('ab世cd')).to.equal(3); // the CJK char splits the run
  });

  it('agrees with split(/\\s+/) on non-CJK text', () => {
    const text = ' The quick\tbrown\r\nfox — jumps\u2028over  the lazy dog. ';
    expect(countTokens(text)).to.equal(text.split(/\s+/).filter(Boolean).length);
  });

  it('splits into one piece per token that join back to the text', () => {
    for (const text of ['word1 word2 word3', '  lead and trail  ', 'hello世界 ok', '𠀀x 𠀁', 'one']) {
      const pieces = splitTokens(text);
      expect(pieces.join('')).to.equal(text);
      expect(pieces.length).to.equal(countTokens(text));
    }
    expect(splitTokens('a  b c')).to.deep.equal(['a', '  b', ' c']);
    expect(splitTokens('   ')).to.deep.equal([]);
  });

  it('adds 4 per message and 2 for priming', () => {
    expect(countMessageTokens([])).to.equal(2);
    expect(countMessageTokens([{ role: 'user', content: 'hello world' }])).to.equal(2 + 4 + 2);
    expect(
      countMessageTokens([
        { role: 'system', content: 'be nice' },
        { role: 'user', content: '你好' },
      ]),
    ).to.equal(2 + 4 + 2 + 4 + 2);
  });
});
