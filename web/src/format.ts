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

/** An instant shown in the account's time zone (IANA name), in the page's language. */
export function dateTimeText(iso: string | null | undefined, timeZone: string, locale: string): string {
  if (!iso) return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false }).format(date);
}

/** The calendar day (YYYY-MM-DD) an instant falls on in a time zone. */
export function dayIn(date: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(date);
  const get = (type: string) => parts.find((p) => p.type === type)!.value;
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** The month label (YYYY-MM) an instant falls in, in a time zone. */
export function monthIn(date: Date, timeZone: string): string {
  return dayIn(date, timeZone).slice(0, 7);
}

/** Minor units as a plain yuan number for a form field ("0.0015"): the inverse of parseYuan. */
export function yuanInput(minor: number): string {
  return yuanText(minor).replace(/[¥,]/g, '');
}

/** How far a time zone is ahead of UTC at an instant, in milliseconds. */
function zoneOffsetMs(date: Date, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(date);
  const get = (type: string) => Number(parts.find((p) => p.type === type)!.value);
  return Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second')) - Math.floor(date.getTime() / 1000) * 1000;
}

/** The first instant (ISO) of a calendar day (YYYY-MM-DD) in a time zone: the inverse of dayIn. */
export function zoneDayStart(day: string, timeZone: string): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  const asUtc = Date.UTC(year, month - 1, date);
  // The zone's offset at the guess, then at the corrected instant (they differ across a DST change).
  const first = asUtc - zoneOffsetMs(new Date(asUtc), timeZone);
  return new Date(asUtc - zoneOffsetMs(new Date(first), timeZone)).toISOString();
}

/** The calendar day after a YYYY-MM-DD day. */
export function nextDay(day: string): string {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, date + 1)).toISOString().slice(0, 10);
}

/** An instant as a datetime-local field shows it (the browser's zone, to the minute): the inverse of `new Date(value)`. */
export function dateTimeInput(iso: string): string {
  const date = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}
