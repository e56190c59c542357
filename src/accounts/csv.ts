import { MINOR_UNITS_PER_CNY } from '../billing/money';

/**
 * CSV for spreadsheets: a header row, one line per record, UTF-8 with a byte-order mark (so that
 * spreadsheet programs read Chinese names correctly), CRLF line ends (RFC 4180).
 */
export function toCsv(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  return '\uFEFF' + [header, ...rows].map((row) => row.map(cell).join(',')).join('\r\n') + '\r\n';
}

function cell(value: string | number | null): string {
  if (value === null) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const DECIMALS = String(MINOR_UNITS_PER_CNY).length - 1;

/** Minor units as yuan with six decimals, by string arithmetic (no binary fractions): -1500 → "-0.001500". */
export function yuan(minor: number): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`${minor} is not an integer of minor units`);
  const digits = String(Math.abs(minor)).padStart(DECIMALS + 1, '0');
  return `${minor < 0 ? '-' : ''}${digits.slice(0, -DECIMALS)}.${digits.slice(-DECIMALS)}`;
}
