import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { recordFact } from '../../src/domain/facts';
import { withAmbientMetadata } from '../../src/eventstore/ambient-metadata';
import type { EventStore } from '../../src/eventstore/port';

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

describe('recordFact', () => {
  it('appends the one fact with its expected version, the request\'s ambient metadata under the given', async () => {
    const calls: Parameters<EventStore['append']>[] = [];
    const store: Pick<EventStore, 'append'> = {
      append: async (...args) => {
        calls.push(args);
        return { nextExpectedVersion: 0, position: { major: 1n, minor: 0n } };
      },
    };
    const fact = { type: 'SearchResultCached' as const, data: { key: 'k' } };
    const result = await withAmbientMetadata(
      () => ({ via: 'dashboard', session_id: 's1' }),
      () => recordFact(store, 'search-k', fact, { expected: 'no_stream', metadata: { requestId: 'req_1', session_id: 's2' } }),
    );
    expect(result).to.deep.equal({ nextExpectedVersion: 0, position: { major: 1n, minor: 0n } });
    expect(calls).to.deep.equal([
      ['search-k', [{ type: 'SearchResultCached', data: { key: 'k' }, metadata: { via: 'dashboard', session_id: 's2', requestId: 'req_1' } }], { expectedVersion: 'no_stream' }],
    ]);
    await recordFact(store, 'search-k', fact, { expected: 'any' });
    expect(calls[1]).to.deep.equal(['search-k', [{ type: 'SearchResultCached', data: { key: 'k' }, metadata: {} }], { expectedVersion: 'any' }]);
  });
});
