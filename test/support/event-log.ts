import type { EventStore, RecordedEvent } from '../../src/eventstore/port';

/**
 * The whole global log as a reader sees it now. A PostgreSQL reader stops below the oldest
 * transaction still open on the server (any database of it), so a test that needs events it has
 * just appended waits for them (waitFor) rather than reading once.
 */
export async function readToEnd(store: EventStore): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  for (;;) {
    const batch = await store.readAll(out.length ? out[out.length - 1]!.position : null, 1000);
    if (batch.length === 0) return out;
    out.push(...batch);
  }
}

/** Event data that an encoding could corrupt: quotes, backslashes, braces and commas, NUL-free control characters, text beyond ASCII, null. */
export const TRICKY_DATA: readonly unknown[] = [
  { text: 'say "hi", {ok} \\ \\" end', path: 'C:\\x\\y' },
  { text: '会议纪要：第一季度 🎉', tab: 'a\tb\nc', nul: 'NULL', empty: '' },
  { nested: { list: [1, 'two', null, { three: [true, false] }], big: 9007199254740991, neg: -0.5 } },
  null,
  [],
  'a bare string',
];
