import { expect } from 'chai';
import { priceLines, priceUnitText } from '../../web/src/prices';
import { byUnitOrder, perSuffix, perUnitText, unitLabel, unitsText, type Translate } from '../../web/src/units';
import { ZH } from '../../web/src/zh';

/** The i18n's t() (web/src/i18n.tsx, which a .tsx module keeps out of this check's reach), in each language. */
const fill = (template: string, values?: Record<string, string | number>) => template.replace(/\{(\w+)\}/g, (_, name: string) => String(values?.[name]));
const en: Translate = (text, values) => fill(text, values);
const zh: Translate = (text, values) => fill(ZH[text] ?? text, values);

describe('the operator pages’ helpers: catalog prices and usage units', () => {
  it('reads every price member of the catalog’s model types as a price, the unit and quantity it is for', () => {
    const lines = priceLines({ input_per_million: 1_000_000, output_per_million: 4_000_000, cached_input_per_million: 250_000, tool_call_prices: { web_search: 25_000 } });
    expect(lines).to.deep.equal([
      { minor: 1_000_000, member: 'input_per_million', unit: 'input_tokens', per: 1_000_000 },
      { minor: 4_000_000, member: 'output_per_million', unit: 'output_tokens', per: 1_000_000 },
      { minor: 250_000, member: 'cached_input_per_million', unit: 'cached_input_tokens', per: 1_000_000 },
      { minor: 25_000, member: 'tool_call_prices', unit: 'web_search_calls', per: 1 },
    ]);
    expect(lines.map((l) => priceUnitText(l, en, 'en-GB'))).to.deep.equal(['per 1M input tokens', 'per 1M output tokens', 'per 1M cached input tokens', 'per web_search call']);
    expect(lines.map((l) => priceUnitText(l, zh, 'zh-CN'))).to.deep.equal(['/ 百万输入 token', '/ 百万输出 token', '/ 百万缓存输入 token', '/ 次 web_search 调用']);
    const video = priceLines({ per_second: { '720p': 250_000 }, per_second_with_reference_video: { '720p': 375_000 } });
    expect(video.map((l) => priceUnitText(l, en, 'en-GB'))).to.deep.equal(['per second at 720p', 'per second at 720p with a reference video']);
    expect(video.map((l) => priceUnitText(l, zh, 'zh-CN'))).to.deep.equal(['/ 秒（720p）', '/ 秒（720p，含参考视频）']);
    expect(priceUnitText(priceLines({ per_second: 5_000 })[0]!, en, 'en-GB')).to.equal('per second');
    expect(priceUnitText(priceLines({ per_image: 5_000 })[0]!, en, 'en-GB')).to.equal('per image');
    expect(priceUnitText(priceLines({ rate_per_hour: 1_200_000 })[0]!, en, 'en-GB')).to.equal('per hour of audio');
    // A member no model type defines yet still shows, under its own name.
    const unknown = priceLines({ per_page: 10 });
    expect(unknown).to.deep.equal([{ minor: 10, member: 'per_page', unit: null, per: 1 }]);
    expect(priceUnitText(unknown[0]!, en, 'en-GB')).to.equal('per_page');
    expect(priceLines({})).to.deep.equal([]);
  });

  it('names usage units in words, in both languages and a steady order, the same on every page', () => {
    expect(unitLabel('input_tokens', en)).to.equal('input tokens');
    expect(unitLabel('duration_ms', en)).to.equal('milliseconds of audio');
    expect(unitLabel('web_search_calls', en)).to.equal('web_search calls');
    expect(unitLabel('pages', en)).to.equal('pages');
    expect(unitLabel('input_tokens', zh)).to.equal('输入 token');
    expect(['pages', 'output_tokens', 'web_search_calls', 'input_tokens'].sort(byUnitOrder)).to.deep.equal(['input_tokens', 'output_tokens', 'pages', 'web_search_calls']);
    // The request log's units come in the API's order; they are shown in the steady one.
    expect(unitsText({ output_tokens: 5, input_tokens: 1_200 }, en, 'en-GB')).to.equal('1,200 input tokens · 5 output tokens');
    expect(unitsText({ output_tokens: 5, input_tokens: 1_200 }, zh, 'zh-CN')).to.equal('1,200 输入 token · 5 输出 token');
    expect(unitsText(null, en, 'en-GB')).to.equal('—');
  });

  it('writes a price’s quantity short (after a unit price) and in words (after a catalog price) from the same rule', () => {
    expect([perSuffix('input_tokens', 1_000_000, 'en-GB'), perSuffix('duration_ms', 3_600_000, 'en-GB'), perSuffix('images', 1, 'en-GB'), perSuffix('input_tokens', 1_000, 'en-GB')]).to.deep.equal(['/M', '/h', '', '/K']);
    expect(perUnitText('input_tokens', 1_000, en, 'en-GB')).to.equal('per 1K input tokens');
    expect(perUnitText('images', 10, en, 'en-GB')).to.equal('per 10 images');
    expect(perUnitText('duration_ms', 3_600_000, zh, 'zh-CN')).to.equal('/ 小时音频');
  });
});
