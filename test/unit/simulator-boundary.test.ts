import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const ROOT = path.resolve(__dirname, '../..');
const SRC = path.join(ROOT, 'src');
const SIMULATOR = path.join(ROOT, 'simulator');
/** The entry point starts the simulator and hands the gateway its URL; nothing else in src/ may know it. */
const ENTRY_POINT = path.join(SRC, 'main.ts');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.(ts|js|mts|cts)$/.test(entry.name) ? [full] : [];
  });
}

/** Every module specifier of a file: static and type imports, re-exports, import() and require(). */
function specifiers(text: string): string[] {
  const found: string[] = [];
  for (const pattern of [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g]) {
    for (const match of text.matchAll(pattern)) found.push(match[1]!);
  }
  return found;
}

function isInside(file: string, dir: string): boolean {
  const relative = path.relative(dir, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

describe('the simulator boundary', () => {
  const files = sourceFiles(SRC);

  it('finds the sources it checks', () => {
    expect(files).to.include(ENTRY_POINT);
    expect(files.length).to.be.greaterThan(50);
  });

  it('no module under src/ but the entry point imports simulator/', () => {
    const offenders = files
      .filter((file) => file !== ENTRY_POINT)
      .flatMap((file) =>
        specifiers(fs.readFileSync(file, 'utf8'))
          .filter((spec) => spec.startsWith('.') && isInside(path.resolve(path.dirname(file), spec), SIMULATOR))
          .map((spec) => `${path.relative(ROOT, file)} imports ${spec}`),
      );
    expect(offenders).to.deep.equal([]);
  });

  it('no module under src/ knows the simulator’s [sim:…] directives', () => {
    const offenders = files.filter((file) => fs.readFileSync(file, 'utf8').includes('[sim:')).map((file) => path.relative(ROOT, file));
    expect(offenders).to.deep.equal([]);
  });

  it('catches an offending import (the check itself works)', () => {
    const file = path.join(SRC, 'video', 'feature.ts');
    const spec = specifiers(`import type { X } from '../../simulator/video';\nconst y = require("../../simulator");`);
    expect(spec.map((s) => isInside(path.resolve(path.dirname(file), s), SIMULATOR))).to.deep.equal([true, true]);
    expect(isInside(path.resolve(path.dirname(file), '../upstreams/channel'), SIMULATOR)).to.equal(false);
  });
});
