/**
 * A CSV read as a spreadsheet program reads a file it opens (Excel, LibreOffice Calc): the fields
 * per RFC 4180 (quotes removed, so quoting does not protect a field), then each field typed. A
 * number literal is a number; a field that begins with `=`, `+`, `-` or `@`, after any tabs and
 * carriage returns, and is not a number, is a formula the program would run; anything else is text,
 * shown as it stands (a leading apostrophe included).
 */
export type SheetCell =
  | { readonly kind: 'empty' }
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'formula'; readonly text: string }
  | { readonly kind: 'text'; readonly text: string };

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const FORMULA = /^[\t\r]*[=+\-@]/;

export function readAsSpreadsheet(csv: string): SheetCell[][] {
  return fieldsOf(csv.replace(/^\uFEFF/, '')).map((row) => row.map(typed));
}

function typed(field: string): SheetCell {
  if (field === '') return { kind: 'empty' };
  if (NUMBER.test(field)) return { kind: 'number', value: Number(field) };
  if (FORMULA.test(field)) return { kind: 'formula', text: field };
  return { kind: 'text', text: field };
}

/** The rows of RFC 4180 text, each a list of its fields with quotes undone. */
function fieldsOf(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let at = 0;
  while (at < text.length) {
    if (text[at] === '"' && field === '') {
      const close = closingQuote(text, at + 1);
      field = text.slice(at + 1, close).replace(/""/g, '"');
      at = close + 1;
      continue;
    }
    if (text[at] === ',') {
      row.push(field);
      field = '';
      at++;
    } else if (text.startsWith('\r\n', at)) {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      at += 2;
    } else {
      field += text[at];
      at++;
    }
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

function closingQuote(text: string, from: number): number {
  for (let at = from; at < text.length; at++) {
    if (text[at] !== '"') continue;
    if (text[at + 1] === '"') at++;
    else return at;
  }
  throw new Error(`an unterminated quoted field at ${from - 1}`);
}

/** The cells of one column (by its header) below the header row. */
export function column(sheet: readonly SheetCell[][], header: string): SheetCell[] {
  const index = sheet[0]!.findIndex((cell) => cell.kind === 'text' && cell.text === header);
  if (index < 0) throw new Error(`no column ${header}`);
  return sheet.slice(1).map((row) => row[index] ?? { kind: 'empty' });
}

/** What a spreadsheet's SUM over the cells gives: the numbers added, everything else skipped. */
export function sum(cells: readonly SheetCell[]): number {
  return cells.reduce((total, cell) => (cell.kind === 'number' ? total + cell.value : total), 0);
}
