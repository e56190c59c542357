import { expect } from 'chai';
import { isDay } from '../../web/src/format';
import { filterText, filtersIn, oneOf, setDayFilters } from '../../web/src/filters';

/** How the dashboard's pages take their filters from the address and give day filters to the API (web/src/filters.ts). */
describe('the dashboard\'s filters', () => {
  it('takes days only when they are calendar days written YYYY-MM-DD', () => {
    expect(isDay('2026-12-05')).to.equal(true);
    expect(isDay('2028-02-29')).to.equal(true);
    for (const text of ['05/12/2026', '2026-02-30', '2026-13-01', '2026-12-5', '2026-12-05T00:00:00Z', '']) expect(isDay(text), text).to.equal(false);
  });

  it('drops from the address what is not a filter, keeping the rest (a bad value shows the page unfiltered there, not a 400)', () => {
    const rules = { outcome: oneOf(['open', 'settled']), from: isDay, to: isDay, model: filterText, channel: filterText };
    const read = filtersIn(`?outcome=x&from=05%2F12%2F2026&to=2026-12-05&model=chat-fast&channel=${'c'.repeat(201)}&other=1`, rules);
    expect(read).to.deep.equal({ outcome: '', from: '', to: '2026-12-05', model: 'chat-fast', channel: '' });
    expect(filtersIn('', rules)).to.deep.equal({ outcome: '', from: '', to: '', model: '', channel: '' });
    expect(filtersIn('?outcome=settled', rules).outcome).to.equal('settled');
  });

  it('gives day filters to the API as instants, both days included, in the zone named', () => {
    const utc = new URLSearchParams();
    setDayFilters(utc, { from: '2026-12-01', to: '2026-12-05' }, 'UTC');
    expect(Object.fromEntries(utc)).to.deep.equal({ from: '2026-12-01T00:00:00.000Z', to: '2026-12-06T00:00:00.000Z' });
    const shanghai = new URLSearchParams();
    setDayFilters(shanghai, { from: '', to: '2026-12-31' }, 'Asia/Shanghai');
    expect(Object.fromEntries(shanghai)).to.deep.equal({ to: '2026-12-31T16:00:00.000Z' });
  });
});
