/**
 * Money arrives as integer minor units: 1 minor unit = 0.000001 CNY (src/billing/money.ts).
 * It is shown in yuan by string arithmetic on the integer (never a binary fraction), with every
 * non-zero decimal kept: at least two decimals, at most six, so nothing is rounded away.
 */
export const MINOR_DIGITS = 6;

export function yuanText(minor: number): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`${minor} is not an integer of minor units`);
  const digits = String(Math.abs(minor)).padStart(MINOR_DIGITS + 1, '0');
  const whole = digits.slice(0, -MINOR_DIGITS).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  let fraction = digits.slice(-MINOR_DIGITS).replace(/0+$/, '');
  if (fraction.length < 2) fraction = fraction.padEnd(2, '0');
  return `${minor < 0 ? '-' : ''}¥${whole}.${fraction}`;
}

/** Yuan typed by a person ("12.5", "0.000001") as minor units, exactly; null when it is not such a number. */
export function parseYuan(text: string): number | null {
  const m = /^\s*(\d{1,12})(?:\.(\d{0,6}))?\s*$/.exec(text);
  if (!m) return null;
  const minor = Number(m[1]!) * 10 ** MINOR_DIGITS + Number((m[2] ?? '').padEnd(MINOR_DIGITS, '0'));
  return Number.isSafeInteger(minor) ? minor : null;
}

/** An amount with its direction: "+¥10.00" for money in, "−¥0.000169" for money out (a true minus sign). */
export function signedYuanText(minor: number): string {
  return `${minor < 0 ? '\u2212' : '+'}${yuanText(Math.abs(minor))}`;
}

/** A count in the page's language ("1,200"). */
export function countText(value: number, locale: string): string {
  return new Intl.NumberFormat(locale, { maximumFractionDigits: 6 }).format(value);
}

/*
 * Dates: one format per language, built from the parts of the instant in the account's zone so
 * that every page (and every ICU version) writes them the same way. English: "5 Dec 2026,
 * 14:03:05"; Chinese: "2026年12月5日 14:03:05". Days (YYYY-MM-DD, as the API's usage names them)
 * read "5 Dec 2026" / "2026年12月5日".
 */
const EN_MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

interface WallClock {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

const clocks = new Map<string, Intl.DateTimeFormat>();

/** What a wall clock in the zone reads at an instant. */
function wallClock(date: Date, timeZone: string): WallClock {
  let format = clocks.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' });
    clocks.set(timeZone, format);
  }
  const parts = format.formatToParts(date);
  const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value ?? NaN);
  return { year: get('year'), month: get('month'), day: get('day'), hour: get('hour'), minute: get('minute'), second: get('second') };
}

const two = (n: number) => String(n).padStart(2, '0');

function isChinese(locale: string): boolean {
  return locale.toLowerCase().startsWith('zh');
}

function dayParts(day: string): [number, number, number] {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) throw new RangeError(`${day} is not a day (YYYY-MM-DD)`);
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

/** A day (YYYY-MM-DD) in the page's language: "5 Dec 2026" / "2026年12月5日". */
export function dayText(day: string, locale: string): string {
  const [year, month, date] = dayParts(day);
  return isChinese(locale) ? `${year}年${month}月${date}日` : `${date} ${EN_MONTHS[month - 1]} ${year}`;
}

/** A day without its year, for a chart's axis: "5 Dec" / "12月5日". */
export function shortDayText(day: string, locale: string): string {
  const [, month, date] = dayParts(day);
  return isChinese(locale) ? `${month}月${date}日` : `${date} ${EN_MONTHS[month - 1]}`;
}

/** An instant shown in the account's time zone (IANA name), in the page's language. */
export function dateTimeText(iso: string | null | undefined, timeZone: string, locale: string): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const c = wallClock(date, timeZone);
  const day = dayText(`${String(c.year).padStart(4, '0')}-${two(c.month)}-${two(c.day)}`, locale);
  const time = `${two(c.hour)}:${two(c.minute)}:${two(c.second)}`;
  return isChinese(locale) ? `${day} ${time}` : `${day}, ${time}`;
}

/** The calendar day (YYYY-MM-DD) an instant falls on in a time zone. */
export function dayIn(date: Date, timeZone: string): string {
  const c = wallClock(date, timeZone);
  return `${String(c.year).padStart(4, '0')}-${two(c.month)}-${two(c.day)}`;
}

/** The month label (YYYY-MM) an instant falls in, in a time zone. */
export function monthIn(date: Date, timeZone: string): string {
  return dayIn(date, timeZone).slice(0, 7);
}

/** The day `count` days after (or before, when negative) a day, on the calendar. */
export function addDays(day: string, count: number): string {
  const [year, month, date] = dayParts(day);
  return new Date(Date.UTC(year, month - 1, date + count)).toISOString().slice(0, 10);
}

/** Whether a text is a calendar day written YYYY-MM-DD (not 2026-02-30), as date inputs hold them. */
export function isDay(text: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(text) && addDays(text, 0) === text;
}

const HOUR = 3_600_000;
const PROBE = 15 * 60_000;

/**
 * The first instant of a day in a time zone: what the API's `from`/`to` take for "from this day"
 * and "until this day". Midnight is not always the answer: where a clock change skips midnight
 * (America/Santiago in September) the day starts when the clock jumps, at 01:00 local; were a
 * clock set back across midnight, the day would start at its last midnight. So: the instant right
 * after the last one, near the day's start, that a clock in the zone still shows as an earlier
 * day. UTC offsets lie within −12 h and +14 h, so 15 hours before the day's midnight in UTC every
 * zone still shows the day before and 13 hours after it every zone shows this day or a later one;
 * the window is probed every 15 minutes (clock changes are hours apart) and the step found is
 * narrowed to the millisecond.
 */
export function startOfDayIn(day: string, timeZone: string): Date {
  const [year, month, date] = dayParts(day);
  const midnightUtc = Date.UTC(year, month - 1, date);
  const before = (t: number) => dayIn(new Date(t), timeZone) < day;
  let lo = midnightUtc - 15 * HOUR;
  for (let t = lo + PROBE; t <= midnightUtc + 13 * HOUR; t += PROBE) if (before(t)) lo = t;
  let hi = lo + PROBE;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (before(mid)) lo = mid;
    else hi = mid;
  }
  return new Date(hi);
}

/** Minor units as a plain yuan number for a form field ("0.0015"): the inverse of parseYuan. */
export function yuanInput(minor: number): string {
  return yuanText(minor).replace(/[¥,]/g, '');
}

/** An instant as a datetime-local field shows it, read on a wall clock in the zone, to the minute ("2026-06-01T00:00"). */
export function dateTimeInputIn(iso: string, timeZone: string): string {
  const c = wallClock(new Date(iso), timeZone);
  return `${dayIn(new Date(iso), timeZone)}T${two(c.hour)}:${two(c.minute)}`;
}

/**
 * The instant a wall clock in the zone shows a datetime-local value ("2026-06-01T00:00"): the inverse
 * of dateTimeInputIn; null when the value is not one. The day's start plus the time of day is off by
 * any clock change earlier that day, so the instant is moved by what the clock then reads wrong. A
 * time a clock change skips (02:30 when clocks jump from 02:00 to 03:00) reads as the same length of
 * time after the jump; a time shown twice (clocks set back) as its first showing.
 */
export function instantOfWallClock(value: string, timeZone: string): Date | null {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return null;
  const [year, month, date] = dayParts(m[1]!);
  const wanted = Date.UTC(year, month - 1, date, Number(m[2]), Number(m[3]), Number(m[4] ?? 0));
  if (Number(m[2]) > 23 || Number(m[3]) > 59 || Number(m[4] ?? 0) > 59) return null;
  if (new Date(wanted).toISOString().slice(0, 10) !== m[1]) return null; // 31 April and the like
  let t = startOfDayIn(m[1]!, timeZone).getTime() + (wanted - Date.UTC(year, month - 1, date));
  for (let step = 0; step < 2; step++) {
    const c = wallClock(new Date(t), timeZone);
    const shown = Date.UTC(c.year, c.month - 1, c.day, c.hour, c.minute, c.second);
    if (shown === wanted) break;
    t += wanted - shown;
  }
  return new Date(t);
}
