/**
 * Statement months in an account's time zone. A month runs from where the previous one ended to
 * the first instant of the next calendar month in the time zone in force for it. A time-zone change
 * recorded at instant t applies from the month t falls in (the first month not yet closed): that
 * month keeps its start and gets its end in the new zone; if that end is already past t, the next
 * month starts there. A month is closed once its end has passed. Folding the events of one account
 * in log order through `advanceTo` and `changeTimeZone` gives the same months on every replay.
 */
export const DEFAULT_TIME_ZONE = 'Asia/Shanghai';

export interface MonthPeriod {
  /** `YYYY-MM`. */
  readonly month: string;
  readonly timezone: string;
  readonly startsAt: Date;
  readonly endsAt: Date;
}

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return /\//.test(name) || name === 'UTC';
  } catch {
    return false;
  }
}

const partsFormats = new Map<string, Intl.DateTimeFormat>();

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function formattedParts(at: number, timezone: string): LocalParts {
  let f = partsFormats.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    partsFormats.set(timezone, f);
  }
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, Number(x.value)]));
  return { year: p.year!, month: p.month!, day: p.day!, hour: p.hour!, minute: p.minute!, second: p.second! };
}

const HOUR_MS = 3_600_000;

/** The zone's offset from UTC at `at` (whole seconds), in ms. */
function offsetAt(at: number, timezone: string): number {
  const p = formattedParts(at, timezone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(at / 1000) * 1000;
}

/**
 * Each zone's offset per hour of UTC time, or NaN for an hour in which it changes. Formatting a
 * date in a zone costs about 10 µs, and replaying the usage read model asks for every event's
 * local date; an offset that is the same at both ends of an hour holds within it (no zone changes
 * its offset twice in an hour). Bounded: cleared when full (replay walks time forwards, so the
 * hours it needs come back at once).
 */
const hourOffsets = new Map<string, number>();
const HOUR_OFFSETS_MAX = 10_000;
let lastHour = { timezone: '', hour: NaN, offset: NaN };

function localParts(at: Date, timezone: string): LocalParts {
  const t = at.getTime();
  const hour = Math.floor(t / HOUR_MS);
  let offset: number | undefined;
  // Consecutive events mostly fall in one hour of one zone: that skips building the key.
  if (lastHour.hour === hour && lastHour.timezone === timezone) offset = lastHour.offset;
  else {
    const key = `${timezone} ${hour}`;
    offset = hourOffsets.get(key);
    if (offset === undefined) {
      const first = offsetAt(hour * HOUR_MS, timezone);
      offset = first === offsetAt((hour + 1) * HOUR_MS - 1, timezone) ? first : NaN;
      if (hourOffsets.size >= HOUR_OFFSETS_MAX) hourOffsets.clear();
      hourOffsets.set(key, offset);
    }
    lastHour = { timezone, hour, offset };
  }
  if (Number.isNaN(offset)) return formattedParts(t, timezone);
  const local = new Date(t + offset);
  return {
    year: local.getUTCFullYear(),
    month: local.getUTCMonth() + 1,
    day: local.getUTCDate(),
    hour: local.getUTCHours(),
    minute: local.getUTCMinutes(),
    second: local.getUTCSeconds(),
  };
}

/** The calendar date of `at` in `timezone`, `YYYY-MM-DD`. */
export function localDate(at: Date, timezone: string): string {
  const p = localParts(at, timezone);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}`;
}

/** The instant the calendar month `YYYY-MM` begins in `timezone`. */
export function monthStart(month: string, timezone: string): Date {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const wall = Date.UTC(y, m - 1, 1);
  // The zone's offset at the guess, then once more at the corrected instant (a change of offset near midnight).
  let guess = wall;
  for (let i = 0; i < 2; i++) {
    const p = localParts(new Date(guess), timezone);
    const offset = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - guess;
    guess = wall - offset;
  }
  return new Date(guess);
}

export function nextMonth(month: string): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01` : `${y}-${pad(m + 1)}`;
}

export function isMonthLabel(text: string): boolean {
  return /^\d{4}-(0[1-9]|1[0-2])$/.test(text) && text >= '1970-01';
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** The first month of an account: the calendar month it was opened in, in the default zone. */
export function firstMonth(openedAt: Date): MonthPeriod {
  const d = localDate(openedAt, DEFAULT_TIME_ZONE).slice(0, 7);
  return { month: d, timezone: DEFAULT_TIME_ZONE, startsAt: monthStart(d, DEFAULT_TIME_ZONE), endsAt: monthStart(nextMonth(d), DEFAULT_TIME_ZONE) };
}

/** The months from `current` on until the one `at` falls in: the ones passed (now closed) and the current one. */
export function advanceTo(current: MonthPeriod, at: Date): { passed: MonthPeriod[]; current: MonthPeriod } {
  const passed: MonthPeriod[] = [];
  let period = current;
  while (at.getTime() >= period.endsAt.getTime()) {
    passed.push(period);
    const month = nextMonth(period.month);
    period = { month, timezone: period.timezone, startsAt: period.endsAt, endsAt: monthStart(nextMonth(month), period.timezone) };
  }
  return { passed, current: period };
}

/** A time-zone change at `at`: the month it falls in ends in the new zone (see the module comment). */
export function changeTimeZone(current: MonthPeriod, at: Date, timezone: string): { passed: MonthPeriod[]; current: MonthPeriod } {
  const open = advanceTo(current, at);
  const endsAt = monthStart(nextMonth(open.current.month), timezone);
  const changed = { ...open.current, timezone, endsAt: endsAt.getTime() > open.current.startsAt.getTime() ? endsAt : open.current.startsAt };
  const after = advanceTo(changed, at);
  return { passed: [...open.passed, ...after.passed], current: after.current };
}
