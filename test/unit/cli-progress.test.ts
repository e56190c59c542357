import { expect } from 'chai';
import { ProgressReporter } from '../../src/cli/progress';

/** A fake output stream that keeps what was written. */
function output(isTTY: boolean): { write(text: string): boolean; readonly isTTY: boolean; text: string } {
  return {
    isTTY,
    text: '',
    write(text: string) {
      this.text += text;
      return true;
    },
  };
}

describe('progress of long commands (audit, projections:rebuild)', () => {
  it('writes a plain line every interval when the output is not a terminal, and a summary at the end', () => {
    let now = 0;
    const out = output(false);
    const progress = new ProgressReporter('audit', out, { clock: () => now, intervalMs: 5_000 });
    progress.setTotal(100_000);
    now = 1_000;
    progress.advance(10_000);
    expect(out.text, 'nothing before the interval').to.equal('');
    now = 5_000;
    progress.advance(10_000);
    now = 7_500;
    progress.advance(5_000);
    now = 10_000;
    progress.advance(5_000);
    now = 20_000;
    progress.advance(70_000);
    progress.finish('no mismatches');
    expect(out.text.split('\n')).to.deep.equal([
      'audit: 20,000 of 100,000 events (20%), 4,000 events/s, about 20.0 s left',
      'audit: 30,000 of 100,000 events (30%), 3,000 events/s, about 23.3 s left',
      'audit: 100,000 of 100,000 events (100%), 5,000 events/s, about 0.0 s left',
      'audit: 100,000 events in 20.0 s (5,000 events/s); no mismatches',
      '',
    ]);
    expect(out.text, 'no terminal control codes in a log').not.to.include('\x1b');
  });

  it('leaves out the percentage and the time left when the total is unknown', () => {
    let now = 0;
    const out = output(false);
    const progress = new ProgressReporter('projections:rebuild', out, { clock: () => now, intervalMs: 2_000 });
    progress.setTotal(null);
    now = 2_000;
    progress.advance(3_000);
    now = 150_000;
    progress.finish();
    expect(out.text).to.equal('projections:rebuild: 3,000 events, 1,500 events/s\nprojections:rebuild: 3,000 events in 2 min 30 s (20 events/s)\n');
  });

  it('redraws one line in place on a terminal and ends it with the summary', () => {
    let now = 0;
    const out = output(true);
    const progress = new ProgressReporter('audit', out, { clock: () => now, redrawMs: 100 });
    progress.setTotal(1_000);
    now = 100;
    progress.advance(100);
    now = 150;
    progress.advance(100);
    now = 200;
    progress.advance(100);
    progress.finish();
    expect(out.text).to.equal(
      '\r\x1b[2Kaudit: 100 of 1,000 events (10%), 1,000 events/s, about 0.9 s left' +
        '\r\x1b[2Kaudit: 300 of 1,000 events (30%), 1,500 events/s, about 0.5 s left' +
        '\r\x1b[2Kaudit: 300 events in 0.2 s (1,500 events/s)\n',
    );
  });
});
