import { expect } from 'chai';
import { recordingLength } from '../../src/minutes/kind';

describe('minutes: a recording’s length as an error states it', () => {
  it('shows the milliseconds that put a recording over the limit, and never rounds up to 60 s', () => {
    const cases: [number, string][] = [
      [7_200_000, '120 min 0 s'],
      [7_200_001, '120 min 0.001 s'],
      [7_300_000, '121 min 40 s'],
      [7_259_999, '120 min 59.999 s'],
      [59_600, '0 min 59.6 s'],
      [61_050, '1 min 1.05 s'],
      // A provider's fraction of a millisecond is a millisecond started, as it is billed.
      [7_200_000.2, '120 min 0.001 s'],
    ];
    for (const [ms, text] of cases) expect(recordingLength(ms), String(ms)).to.equal(text);
  });
});
