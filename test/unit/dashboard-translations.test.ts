import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { KNOWN_UNITS, perUnitText, unitLabel, type Translate } from '../../web/src/units';
import { ZH } from '../../web/src/zh';

const SOURCES = path.join(__dirname, '../../web/src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

/** The English texts given to `t(...)` as a string literal (the i18n key), with where each is used. */
function literalTexts(): Map<string, string> {
  const found = new Map<string, string>();
  // `t(` or `i18n.t(`, not the end of a longer name (`split(`), then one quoted literal without interpolation.
  const call = /(?<![\w$])t\(\s*(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\$]|\\.)*)`)\s*[,)]/g;
  for (const file of sourceFiles(SOURCES)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(call)) {
      const literal = (m[1] ?? m[2] ?? m[3])!.replace(/\\(.)/g, '$1');
      if (!found.has(literal)) found.set(literal, `${path.relative(SOURCES, file)}:${text.slice(0, m.index).split('\n').length}`);
    }
  }
  return found;
}

describe('the dashboard’s Chinese', () => {
  it('finds the texts of the sources (so the check below cannot pass by finding none)', () => {
    const texts = literalTexts();
    expect(texts.size).to.be.greaterThan(300);
    expect(texts.has('Sign in')).to.equal(true);
    expect(texts.has('Unnamed key · {prefix}…')).to.equal(true);
  });

  it('has an entry for every text any page gives to t() as a literal', () => {
    const missing = [...literalTexts()].filter(([text]) => ZH[text] === undefined).map(([text, where]) => `${where}: ${text}`);
    expect(missing).to.deep.equal([]);
  });

  it('keeps every placeholder of the English text in the Chinese', () => {
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    const broken = [...literalTexts().keys()].filter((text) => ZH[text] !== undefined && placeholders(ZH[text]!).join() !== placeholders(text).join());
    expect(broken).to.deep.equal([]);
  });

  it('names every known usage unit in Chinese, counted and after “per”', () => {
    const zh: Translate = (text, values) => (ZH[text] ?? text).replace(/\{(\w+)\}/g, (_, name: string) => String(values?.[name]));
    const english = (text: string) => /[a-z]/i.test(text.replace('token', ''));
    const untranslated = KNOWN_UNITS.filter((unit) => english(unitLabel(unit, zh)) || english(perUnitText(unit, 1, zh, 'zh-CN')) || english(perUnitText(unit, 1_000_000, zh, 'zh-CN')));
    expect(untranslated).to.deep.equal([]);
  });
});
