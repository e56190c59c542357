import { expect } from 'chai';

/**
 * The exact framing of a successful streamed chat-completion answer, as the agents send it: SSE
 * `data:` frames and `: ping` comments only, no `event:` lines; the assistant role chunk, content
 * deltas, a `finish_reason: "stop"` chunk, one `choices: []` chunk with `lastExtras`, then
 * `data: [DONE]`. Every chunk carries the same id and `identity` (model, bot_id, ...).
 */
export function expectChatChunkFrames(text: string, identity: Record<string, string>, lastExtras: readonly string[]): { id: string; chunks: any[]; content: string; last: any } {
  const frames = text.split('\n\n');
  expect(frames.pop(), 'the stream ends with a complete frame').to.equal('');
  for (const f of frames) expect(f === ': ping' || (f.startsWith('data: ') && !f.includes('\n')), `frame ${JSON.stringify(f.slice(0, 80))}`).to.equal(true);
  expect(text).not.to.match(/^event:/m);
  const data = frames.filter((f) => f !== ': ping').map((f) => f.slice('data: '.length));
  expect(data[data.length - 1], 'the last frame').to.equal('[DONE]');
  const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
  expect(chunks.length, 'role, at least one delta, stop, extras').to.be.at.least(4);
  const id = chunks[0].id;
  expect(id).to.be.a('string').and.not.equal('');
  for (const c of chunks) expect(c).to.deep.include({ id, object: 'chat.completion.chunk', ...identity });
  const keys = ['id', 'object', 'created', ...Object.keys(identity), 'choices'];
  expect(chunks[0].choices).to.deep.equal([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  const deltas = chunks.slice(1, -2);
  for (const c of deltas) {
    expect(c).to.have.all.keys(...keys);
    expect(c.choices).to.have.length(1);
    expect(c.choices[0]).to.have.all.keys('index', 'delta', 'finish_reason');
    expect(c.choices[0].delta).to.have.all.keys('content');
    expect(c.choices[0].finish_reason).to.equal(null);
  }
  expect(chunks[chunks.length - 2]).to.have.all.keys(...keys);
  expect(chunks[chunks.length - 2].choices).to.deep.equal([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  const last = chunks[chunks.length - 1];
  expect(last).to.have.all.keys(...keys, ...lastExtras);
  expect(last.choices).to.deep.equal([]);
  return { id, chunks, content: deltas.map((c) => c.choices[0].delta.content as string).join(''), last };
}
