import { MINOR_UNITS_PER_CNY } from '../billing/money';

/** Minor units written as yuan with six decimals: a number to a spreadsheet, like the integer cells. */
export class YuanCell {
  constructor(readonly minor: number) {}
}

/** What a CSV cell may hold: text, an integer, an amount in yuan, or nothing. */
export type CsvCell = string | number | YuanCell | null;

/**
 * CSV for spreadsheets: a header row, one line per record, UTF-8 with a byte-order mark (so that
 * spreadsheet programs read Chinese names correctly), CRLF line ends (RFC 4180).
 */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  return '\uFEFF' + [header, ...rows].map((row) => row.map(cell).join(',')).join('\r\n') + '\r\n';
}

/**
 * Text that a spreadsheet would run as a formula: what begins with `=`, `+`, `-` or `@`, or with a
 * tab or carriage return (which a spreadsheet may strip before it looks). Credit references,
 * notes, refund reasons and client request ids are such text, and a finance reader opens these
 * files in a spreadsheet: `=HYPERLINK(…)` or `-2-3` must stay the text it was.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

function cell(value: CsvCell): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  if (value instanceof YuanCell) return yuan(value.minor);
  // A leading apostrophe makes the spreadsheet read the rest as text (OWASP, CSV injection).
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  // Quoted too where a spreadsheet of another locale separates cells (`;`, a tab), so that no part
  // of the text starts a cell of its own (`INV-1;=cmd|…` must stay one cell).
  return /[",;\t\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const DECIMALS = String(MINOR_UNITS_PER_CNY).length - 1;

/** Minor units as yuan with six decimals, by string arithmetic (no binary fractions): -1500 → "-0.001500". */
export function yuan(minor: number): string {
  if (!Number.isSafeInteger(minor)) throw new RangeError(`${minor} is not an integer of minor units`);
  const digits = String(Math.abs(minor)).padStart(DECIMALS + 1, '0');
  return `${minor < 0 ? '-' : ''}${digits.slice(0, -DECIMALS)}.${digits.slice(-DECIMALS)}`;
}
