import { expect } from 'chai';
import { NO_DATA, objectCodec, TaskDataError } from '../../src/tasks/codec';
import { decodeRow, decodeTask, engineKind, type TaskKind } from '../../src/tasks/kind';
import { taskDecider } from '../../src/tasks/decider';
import type { TaskRow } from '../../src/tasks/view-row';
import { NO_CHARGE } from '../../src/billing/money';

interface Greeting {
  readonly text: string;
  readonly loud: boolean;
  readonly sender?: string;
}

interface Counted {
  readonly words: number;
}

const greeting = objectCodec<Greeting>('greeting', { text: true, loud: true });
const counted = objectCodec<Counted>('word count', { words: true });
const GREETING_TASK = { kind: 'greeting', idPrefix: 'grt', request: greeting, result: counted, usage: NO_DATA };

describe('task codecs', () => {
  it('encodes a kind value as a plain object and decodes it back', () => {
    const value: Greeting = { text: 'hello', loud: false, sender: 'ann' };
    const encoded = greeting.encode(value);
    expect(encoded).to.deep.equal({ text: 'hello', loud: false, sender: 'ann' });
    expect(greeting.decode(JSON.parse(JSON.stringify(encoded)))).to.deep.equal(value);
  });

  it('accepts a value without its optional members, and null members that are present', () => {
    expect(greeting.decode({ text: 'hi', loud: true })).to.deep.equal({ text: 'hi', loud: true });
    expect(objectCodec<{ readonly note: string | null }>('note', { note: true }).decode({ note: null })).to.deep.equal({ note: null });
  });

  it('refuses recorded data missing a required member, naming the kind data and the members', () => {
    expect(() => greeting.decode({ text: 'hi' })).to.throw(TaskDataError, 'recorded greeting is not a greeting: missing loud');
    expect(() => counted.decode({})).to.throw(TaskDataError, 'missing words');
  });

  it('decodes a task state and a view row: request always, result and usage once recorded', () => {
    const state = { ...taskDecider.initialState(), taskId: 'grt_1', request: { text: 'hi', loud: true } };
    const task = decodeTask(GREETING_TASK, state);
    expect(task.request).to.deep.equal({ text: 'hi', loud: true });
    expect(task.result).to.equal(null);
    expect(task.usage).to.equal(null);
    const row = { task_id: 'grt_1', request: { text: 'hi', loud: false }, result: { words: 1 }, usage: {} } as Pick<TaskRow, 'task_id' | 'request' | 'result' | 'usage'>;
    const decoded = decodeRow(GREETING_TASK, { ...(row as TaskRow) });
    expect(decoded.result).to.deep.equal({ words: 1 });
    expect(() => decodeRow(GREETING_TASK, { ...(row as TaskRow), result: { letters: 2 } })).to.throw(TaskDataError, 'missing words');
  });

  it('is applied by the engine around a kind: decoded in, encoded out', async () => {
    const seen: Greeting[] = [];
    const kind: TaskKind<Greeting, Counted, Readonly<Record<string, never>>> = {
      ...GREETING_TASK,
      async submit(task) {
        seen.push(task.request);
        return { upstreamId: 'up_1' };
      },
      async poll(task) {
        return { state: 'succeeded', result: { words: task.request.text.split(' ').length }, usage: {}, artifacts: [] };
      },
      pollDelayMs: () => 1000,
      succeedsBeforeArchive: (task) => !task.request.loud,
      settlement: () => ({ pricing: NO_CHARGE, usage: {} }),
      render: (row) => ({ id: row.task_id, text: row.request.text, words: row.result?.words ?? null }),
    };
    const engine = engineKind(kind);
    const state = { ...taskDecider.initialState(), taskId: 'grt_2', request: { text: 'hello there', loud: true } };
    expect(await engine.submit(state)).to.deep.equal({ upstreamId: 'up_1' });
    expect(seen).to.deep.equal([{ text: 'hello there', loud: true }]);
    expect(await engine.poll(state)).to.deep.equal({ state: 'succeeded', result: { words: 2 }, usage: {}, artifacts: [] });
    expect(engine.succeedsBeforeArchive(state)).to.equal(false);
    // Optional parts a kind leaves out: no failure charge, no upstream cancel, no webhook members.
    expect(engine.failureSettlement(state)).to.equal(null);
    expect(engine.webhookFields(state, { url: () => ({ url: '', expiresAt: '' }) } as never)).to.deep.equal({});
    await engine.cancelUpstream(state);
    expect(() => engine.submit({ ...state, request: { loud: true } })).to.throw(TaskDataError, 'missing text');
  });
});
