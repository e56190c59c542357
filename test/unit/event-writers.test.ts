import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';

const SRC = path.resolve(__dirname, '../../src');

/**
 * Events are written two ways only: a decider's consequences through CommandHandler, and facts
 * with no decision through recordFact. Only those, the event store adapters and the store decorator
 * that meters appends may call EventStore.append.
 */
const APPENDERS = new Set(
  ['domain/command-handler.ts', 'domain/facts.ts', 'metrics/metered-event-store.ts'].map((f) => path.join(SRC, f)),
);
const ADAPTERS = path.join(SRC, 'eventstore');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

describe('who writes events', () => {
  const files = sourceFiles(SRC);

  it('finds the sources it checks, the appending ones included', () => {
    expect(files.length).to.be.greaterThan(50);
    for (const file of APPENDERS) expect(fs.readFileSync(file, 'utf8'), file).to.match(/\.append\(/);
  });

  it('appends nowhere else: a fact goes through recordFact, a decision through CommandHandler', () => {
    const offenders = files
      .filter((file) => !APPENDERS.has(file) && !file.startsWith(ADAPTERS + path.sep))
      .filter((file) => /\.append\(/.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(SRC, file));
    expect(offenders).to.deep.equal([]);
  });
});
