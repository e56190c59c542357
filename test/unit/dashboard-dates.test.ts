import { expect } from 'chai';
import { addDays, dateTimeInputIn, dateTimeText, dayIn, dayText, instantOfWallClock, shortDayText, signedYuanText, startOfDayIn } from '../../web/src/format';

/** The dashboard's one date format per language, and the days its filters mean, in the account's zone (web/src/format.ts). */
describe('the dashboard\'s dates and days', () => {
  it('writes an instant one way per language, in the zone given', () => {
    expect(dateTimeText('2026-12-05T06:03:05Z', 'Asia/Shanghai', 'en-GB')).to.equal('5 Dec 2026, 14:03:05');
    expect(dateTimeText('2026-12-05T06:03:05Z', 'Asia/Shanghai', 'zh-CN')).to.equal('2026年12月5日 14:03:05');
    expect(dateTimeText('2026-12-05T06:03:05Z', 'America/New_York', 'en-GB')).to.equal('5 Dec 2026, 01:03:05');
    expect(dateTimeText('2026-12-31T23:59:59.999Z', 'UTC', 'en-GB')).to.equal('31 Dec 2026, 23:59:59');
    expect(dateTimeText('2027-01-01T00:00:00Z', 'UTC', 'zh-CN')).to.equal('2027年1月1日 00:00:00');
    expect(dateTimeText(null, 'UTC', 'en-GB')).to.equal('—');
  });

  it('writes days as the instants\' dates are written, and short for a chart', () => {
    expect(dayText('2026-03-08', 'en-GB')).to.equal('8 Mar 2026');
    expect(dayText('2026-03-08', 'zh-CN')).to.equal('2026年3月8日');
    expect(shortDayText('2026-11-25', 'en-GB')).to.equal('25 Nov');
    expect(shortDayText('2026-11-25', 'zh-CN')).to.equal('11月25日');
    expect(() => dayText('2026-3-8', 'en-GB')).to.throw(RangeError);
  });

  it('counts days on the calendar, across months, years and leap days', () => {
    expect(addDays('2026-12-31', 1)).to.equal('2027-01-01');
    expect(addDays('2028-03-01', -1)).to.equal('2028-02-29');
    expect(addDays('2026-12-05', -29)).to.equal('2026-11-06');
    expect(dayIn(new Date('2026-12-05T16:00:00Z'), 'Asia/Shanghai')).to.equal('2026-12-06');
    expect(dayIn(new Date('2026-12-05T15:59:59.999Z'), 'Asia/Shanghai')).to.equal('2026-12-05');
  });

  it('turns a day into the first instant of that day in the zone, for the API\'s from and to', () => {
    const start = (day: string, zone: string) => startOfDayIn(day, zone).toISOString();
    expect(start('2026-12-05', 'Asia/Shanghai')).to.equal('2026-12-04T16:00:00.000Z');
    expect(start('2026-12-05', 'UTC')).to.equal('2026-12-05T00:00:00.000Z');
    // The extremes of the offsets: +14 h and −12 h.
    expect(start('2026-12-05', 'Pacific/Kiritimati')).to.equal('2026-12-04T10:00:00.000Z');
    expect(start('2026-12-05', 'Etc/GMT+12')).to.equal('2026-12-05T12:00:00.000Z');
    // A half-hour zone.
    expect(start('2026-12-05', 'Asia/Kolkata')).to.equal('2026-12-04T18:30:00.000Z');
  });

  it('is right across daylight saving: the day a clock changes, and the day after', () => {
    const start = (day: string, zone: string) => startOfDayIn(day, zone).toISOString();
    // New York springs forward at 02:00 on 8 March 2026: that day starts at −05:00, the next at −04:00 (a 23-hour day).
    expect(start('2026-03-08', 'America/New_York')).to.equal('2026-03-08T05:00:00.000Z');
    expect(start('2026-03-09', 'America/New_York')).to.equal('2026-03-09T04:00:00.000Z');
    // …and falls back on 1 November: a 25-hour day.
    expect(start('2026-11-01', 'America/New_York')).to.equal('2026-11-01T04:00:00.000Z');
    expect(start('2026-11-02', 'America/New_York')).to.equal('2026-11-02T05:00:00.000Z');
    expect(start('2026-03-30', 'Europe/London')).to.equal('2026-03-29T23:00:00.000Z');
    // Lord Howe moves its clock by half an hour.
    expect(start('2026-10-05', 'Australia/Lord_Howe')).to.equal('2026-10-04T13:00:00.000Z');
  });

  it('starts a day whose midnight a clock change skips when the clock jumps (01:00 local)', () => {
    // Santiago springs forward at midnight on 6 September 2026: 00:00 −04:00 becomes 01:00 −03:00.
    const start = startOfDayIn('2026-09-06', 'America/Santiago');
    expect(start.toISOString()).to.equal('2026-09-06T04:00:00.000Z');
    expect(dayIn(new Date(start.getTime() - 1), 'America/Santiago')).to.equal('2026-09-05');
    expect(dateTimeText(start.toISOString(), 'America/Santiago', 'en-GB')).to.equal('6 Sep 2026, 01:00:00');
    // Santiago falls back at midnight on 5 April 2026: 00:00 −03:00 becomes 23:00 −04:00 of the 4th.
    expect(startOfDayIn('2026-04-05', 'America/Santiago').toISOString()).to.equal('2026-04-05T04:00:00.000Z');
  });

  it('is the one rule for a day’s start: Havana, whose midnight a clock change also skips, starts its day at 01:00', () => {
    // Havana springs forward at midnight on 8 March 2026: 00:00 −05:00 becomes 01:00 −04:00.
    expect(startOfDayIn('2026-03-08', 'America/Havana').toISOString()).to.equal('2026-03-08T05:00:00.000Z');
    expect(dayIn(new Date(Date.parse('2026-03-08T05:00:00Z') - 1), 'America/Havana')).to.equal('2026-03-07');
  });

  it('edits an instant as a wall clock of the account’s zone (a key’s expiry), not of the browser’s', () => {
    // 00:00:30 on 1 June in Shanghai reads there as 00:00 (to the minute), wherever the browser is.
    expect(dateTimeInputIn('2026-05-31T16:00:30Z', 'Asia/Shanghai')).to.equal('2026-06-01T00:00');
    expect(dateTimeInputIn('2026-05-31T16:00:30Z', 'Europe/London')).to.equal('2026-05-31T17:00');
    expect(instantOfWallClock('2026-06-01T00:00', 'Asia/Shanghai')?.toISOString()).to.equal('2026-05-31T16:00:00.000Z');
    expect(instantOfWallClock('2026-06-01T00:00:45', 'Asia/Shanghai')?.toISOString()).to.equal('2026-05-31T16:00:45.000Z');
    expect(instantOfWallClock('2026-12-05T09:30', 'UTC')?.toISOString()).to.equal('2026-12-05T09:30:00.000Z');
    // Across the day's clock change: after New York springs forward, and after it falls back.
    expect(instantOfWallClock('2026-03-08T12:00', 'America/New_York')?.toISOString()).to.equal('2026-03-08T16:00:00.000Z');
    expect(instantOfWallClock('2026-11-01T12:00', 'America/New_York')?.toISOString()).to.equal('2026-11-01T17:00:00.000Z');
    // A time the change skips reads as the same time after the jump; a time shown twice as its first showing.
    expect(instantOfWallClock('2026-03-08T02:30', 'America/New_York')?.toISOString()).to.equal('2026-03-08T07:30:00.000Z');
    expect(instantOfWallClock('2026-11-01T01:30', 'America/New_York')?.toISOString()).to.equal('2026-11-01T05:30:00.000Z');
    // Santiago's skipped midnight.
    expect(instantOfWallClock('2026-09-06T00:30', 'America/Santiago')?.toISOString()).to.equal('2026-09-06T04:30:00.000Z');
    // The inverse of each other, at every quarter hour of the days around London's two clock changes.
    for (const [first, last] of [['2026-03-28T00:00:00Z', '2026-03-31T00:00:00Z'], ['2026-10-24T00:00:00Z', '2026-10-27T00:00:00Z']] as const) {
      for (let t = Date.parse(first); t < Date.parse(last); t += 15 * 60_000) {
        const shown = dateTimeInputIn(new Date(t).toISOString(), 'Europe/London');
        const back = instantOfWallClock(shown, 'Europe/London')!;
        expect(dateTimeInputIn(back.toISOString(), 'Europe/London'), shown).to.equal(shown);
      }
    }
    for (const bad of ['', '2026-06-01', '2026-06-01T24:00', '2026-02-30T10:00', '2026-06-01T10:60', 'tomorrow']) expect(instantOfWallClock(bad, 'UTC'), bad).to.equal(null);
  });

  it('makes consecutive days meet exactly, so a range of days misses and repeats no instant', () => {
    for (const zone of ['America/New_York', 'Europe/London', 'America/Santiago', 'Asia/Shanghai']) {
      let day = '2026-01-01';
      let start = startOfDayIn(day, zone).getTime();
      for (let i = 0; i < 366; i++) {
        const next = addDays(day, 1);
        const nextStart = startOfDayIn(next, zone).getTime();
        expect(dayIn(new Date(start), zone), `${zone} ${day}`).to.equal(day);
        expect(dayIn(new Date(nextStart - 1), zone), `${zone} ${day}`).to.equal(day);
        expect(nextStart - start, `${zone} ${day}`).to.be.within(23 * 3_600_000, 25 * 3_600_000);
        day = next;
        start = nextStart;
      }
    }
  });

  it('signs amounts: money in with +, money out with a minus sign', () => {
    expect(signedYuanText(10_000_000)).to.equal('+¥10.00');
    expect(signedYuanText(-169)).to.equal('\u2212¥0.000169');
    expect(signedYuanText(-1_234_500_000)).to.equal('\u2212¥1,234.50');
  });
});
