import { expect } from 'chai';
import { DeliveredOutput } from '../../src/chat/delivered-output';

describe('the output a Responses stream delivered', () => {
  const message = { type: 'message', id: 'msg_1', role: 'assistant', status: 'in_progress', content: [] };

  it('is built from the events relayed, an unfinished item marked incomplete, without changing the events', () => {
    const output = new DeliveredOutput();
    const added = { type: 'response.output_item.added', output_index: 0, item: message };
    output.observe(added);
    output.observe({ type: 'response.content_part.added', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    output.observe({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hello' });
    output.observe({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: ' there' });
    expect(output.output()).to.deep.equal([{ ...message, status: 'incomplete', content: [{ type: 'output_text', text: 'Hello there', annotations: [] }] }]);
    expect(added.item.content, 'the relayed event is left as it was').to.deep.equal([]);
  });

  it('keeps no item or part at an index a provider could blow up (a sparse array a billion long)', () => {
    const output = new DeliveredOutput();
    output.observe({ type: 'response.output_item.added', output_index: 1_000_000_000, item: message });
    output.observe({ type: 'response.output_item.added', output_index: 0, item: message });
    output.observe({ type: 'response.content_part.added', output_index: 0, content_index: 2 ** 31, part: { type: 'output_text', text: 'x' } });
    output.observe({ type: 'response.output_item.added', output_index: -1, item: message });
    expect(output.output()).to.deep.equal([{ ...message, status: 'incomplete' }]);
  });
});

describe('the function calls a Responses stream delivered', () => {
  it('carry the arguments their deltas delivered, an unfinished call marked incomplete', () => {
    const output = new DeliveredOutput();
    const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '', status: 'in_progress' };
    output.observe({ type: 'response.output_item.added', output_index: 0, item: call });
    output.observe({ type: 'response.function_call_arguments.delta', output_index: 0, delta: '{"city":' });
    output.observe({ type: 'response.function_call_arguments.delta', output_index: 0, delta: '"Par' });
    expect(output.output()).to.deep.equal([{ ...call, arguments: '{"city":"Par', status: 'incomplete' }]);
    expect(call.arguments, 'the relayed event is left as it was').to.equal('');
  });
});
