import { expect } from 'chai';
import { advanceTo, changeTimeZone, firstMonth, localDate, monthStart } from '../../src/accounts/calendar';
import { toCsv, yuan } from '../../src/accounts/csv';

describe('statement months and CSV amounts', () => {
  it('given an account opened in Shanghai, when time passes a month end, then the next month starts where the last ended', () => {
    const january = firstMonth(new Date('2026-01-10T00:00:00Z'));
    expect(january).to.deep.equal({ month: '2026-01', timezone: 'Asia/Shanghai', startsAt: new Date('2025-12-31T16:00:00Z'), endsAt: new Date('2026-01-31T16:00:00Z') });
    const { passed, current } = advanceTo(january, new Date('2026-03-05T00:00:00Z'));
    expect(passed.map((p) => p.month)).to.deep.equal(['2026-01', '2026-02']);
    expect(current).to.deep.include({ month: '2026-03', startsAt: new Date('2026-02-28T16:00:00Z') });
  });

  it('given a month not yet closed, when the zone changes, then it keeps its start and ends in the new zone (daylight saving included)', () => {
    const march = advanceTo(firstMonth(new Date('2026-03-01T00:00:00Z')), new Date('2026-03-10T00:00:00Z')).current;
    const { passed, current } = changeTimeZone(march, new Date('2026-03-10T00:00:00Z'), 'Europe/Berlin');
    expect(passed).to.deep.equal([]);
    expect(current).to.deep.equal({ month: '2026-03', timezone: 'Europe/Berlin', startsAt: new Date('2026-02-28T16:00:00Z'), endsAt: new Date('2026-03-31T22:00:00Z') });
    expect(monthStart('2026-11', 'Europe/Berlin')).to.deep.equal(new Date('2026-10-31T23:00:00Z'));
  });

  it('given a change whose new month end has already passed, when it is folded, then the next month starts at that end', () => {
    const july = { month: '2026-07', timezone: 'America/Los_Angeles', startsAt: new Date('2026-06-01T07:00:00Z'), endsAt: new Date('2026-08-01T07:00:00Z') };
    const { passed, current } = changeTimeZone(july, new Date('2026-08-01T03:00:00Z'), 'Asia/Shanghai');
    expect(passed.map((p) => [p.month, p.endsAt.toISOString()])).to.deep.equal([['2026-07', '2026-07-31T16:00:00.000Z']]);
    expect(current).to.deep.include({ month: '2026-08', startsAt: new Date('2026-07-31T16:00:00Z') });
    expect(localDate(new Date('2026-07-31T16:30:00Z'), 'Asia/Shanghai')).to.equal('2026-08-01');
  });

  it('gives the local date Intl gives, minute by minute around offset changes (cached offsets per hour)', () => {
    const zones = ['Europe/Berlin', 'America/Los_Angeles', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'America/St_Johns', 'Asia/Shanghai', 'UTC'];
    // Days holding a daylight-saving change in one of the zones, walked in 7-minute steps (every minute of the hour over time).
    const days = ['2026-03-08', '2026-03-29', '2026-04-05', '2026-10-04', '2026-10-25', '2026-11-01', '2026-12-31'];
    let checked = 0;
    for (const timezone of zones) {
      const reference = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
      for (const day of days) {
        const start = Date.parse(`${day}T00:00:00Z`) - 86_400_000;
        for (let t = start; t < start + 3 * 86_400_000; t += 7 * 60_000 + 13_000) {
          expect(localDate(new Date(t), timezone), `${timezone} ${new Date(t).toISOString()}`).to.equal(reference.format(t));
          checked++;
        }
      }
    }
    expect(checked).to.be.greaterThan(20_000);
  });

  it('writes yuan with six decimals by string arithmetic, and CSV with a BOM and quoted cells', () => {
    expect([0, 1, 169, 1_000_000, 99_599_722, -1500, 9_007_199_254_740_991].map(yuan)).to.deep.equal([
      '0.000000', '0.000001', '0.000169', '1.000000', '99.599722', '-0.001500', '9007199254.740991',
    ]);
    expect(toCsv(['a', 'b'], [['x,y', null], ['说 "hi"', 2]])).to.equal('\uFEFFa,b\r\n"x,y",\r\n"说 ""hi""",2\r\n');
  });
});
