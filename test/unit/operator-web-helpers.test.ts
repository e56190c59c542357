import { expect } from 'chai';
import { dayIn, nextDay, zoneDayStart } from '../../web/src/format';
import { byQuantityOrder, priceLines, quantityUnit } from '../../web/src/prices';

describe('the operator pages’ helpers: days of a zone, catalog prices and usage units', () => {
  it('finds the first instant of a day in a zone, across a DST change, as the inverse of dayIn', () => {
    expect(zoneDayStart('2026-12-06', 'Asia/Shanghai')).to.equal('2026-12-05T16:00:00.000Z');
    expect(zoneDayStart('2026-12-06', 'UTC')).to.equal('2026-12-06T00:00:00.000Z');
    // New York moves to summer time at 02:00 on 8 March 2026: midnight is still at -05:00.
    expect(zoneDayStart('2026-03-08', 'America/New_York')).to.equal('2026-03-08T05:00:00.000Z');
    expect(zoneDayStart('2026-03-09', 'America/New_York')).to.equal('2026-03-09T04:00:00.000Z');
    for (const zone of ['Asia/Shanghai', 'UTC', 'America/New_York', 'Asia/Kolkata']) {
      const start = new Date(zoneDayStart('2026-11-01', zone));
      expect(dayIn(start, zone), zone).to.equal('2026-11-01');
      expect(dayIn(new Date(start.getTime() - 1), zone), zone).to.equal('2026-10-31');
    }
    expect(nextDay('2026-12-31')).to.equal('2027-01-01');
    expect(nextDay('2028-02-28')).to.equal('2028-02-29');
  });

  it('reads every price member of the catalog’s model types as a price and its unit', () => {
    expect(priceLines({ input_per_million: 1_000_000, output_per_million: 4_000_000, cached_input_per_million: 250_000, tool_call_prices: { web_search: 25_000 } })).to.deep.equal([
      { minor: 1_000_000, unit: 'per 1M input tokens', values: { member: 'input_per_million' } },
      { minor: 4_000_000, unit: 'per 1M output tokens', values: { member: 'output_per_million' } },
      { minor: 250_000, unit: 'per 1M cached input tokens', values: { member: 'cached_input_per_million' } },
      { minor: 25_000, unit: 'per {variant} call', values: { member: 'tool_call_prices', variant: 'web_search' } },
    ]);
    expect(priceLines({ per_second: { '720p': 250_000 }, per_second_with_reference_video: { '720p': 375_000 } }).map((l) => l.unit)).to.deep.equal([
      'per second at {variant}',
      'per second at {variant} with a reference video',
    ]);
    expect(priceLines({ per_second: 5_000 })[0]!.unit).to.equal('per second');
    expect(priceLines({ rate_per_hour: 1_200_000 })[0]!.unit).to.equal('per hour of audio');
    // A member no model type defines yet still shows, under its own name.
    expect(priceLines({ per_page: 10 })).to.deep.equal([{ minor: 10, unit: '{member}', values: { member: 'per_page' } }]);
    expect(priceLines({})).to.deep.equal([]);
  });

  it('names usage units in words, in a steady order', () => {
    expect(quantityUnit('input_tokens')).to.deep.equal({ text: 'input tokens' });
    expect(quantityUnit('web_search_calls')).to.deep.equal({ text: '{tool} calls', values: { tool: 'web_search' } });
    expect(quantityUnit('pages')).to.deep.equal({ text: '{name}', values: { name: 'pages' } });
    expect(['pages', 'output_tokens', 'web_search_calls', 'input_tokens'].sort(byQuantityOrder)).to.deep.equal(['input_tokens', 'output_tokens', 'pages', 'web_search_calls']);
  });
});
