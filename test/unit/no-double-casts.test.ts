import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const SRC = path.resolve(__dirname, '../../src');

/** `x as unknown as T` tells the compiler to stop checking; src/ types its data instead (codecs, typed model readers). */
const DOUBLE_CAST = /\bas\s+unknown\s+as\b/;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|mts|cts|tsx)$/.test(entry.name) ? [full] : [];
  });
}

describe('no `as unknown as` in src/', () => {
  const files = sourceFiles(SRC);

  it('finds the sources it checks', () => {
    expect(files.length).to.be.greaterThan(100);
  });

  it('has no double cast in any source file', () => {
    const offending = files.flatMap((file) =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) => (DOUBLE_CAST.test(line) ? [`${path.relative(SRC, file)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offending, `double casts in src/:\n${offending.join('\n')}`).to.deep.equal([]);
  });
});
