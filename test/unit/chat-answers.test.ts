import { expect } from 'chai';
import { deliveredText, finishReasonFor, withClientFinishReasons } from '../../src/chat/chat-answers';

describe('what the gateway reads in a provider’s chat answers', () => {
  it('delivered text: the content, the refusal and every call’s name and arguments', () => {
    expect(deliveredText({ content: 'plain' })).to.equal('plain');
    expect(deliveredText({ content: null })).to.equal('');
    expect(deliveredText({ refusal: 'No.' })).to.equal('No.');
    expect(deliveredText({ content: null, tool_calls: [{ index: 0, function: { name: 'f', arguments: '{"a":' } }, { index: 1, function: { arguments: '1}' } }] })).to.equal('f{"a":1}');
    expect(deliveredText({ function_call: { name: 'g', arguments: '{}' } })).to.equal('g{}');
  });

  it('finish reasons: tool_calls and function_call only for a request that offered tools or functions, else stop', () => {
    const tools = { tools: [{ type: 'function' }] };
    const functions = { functions: [{ name: 'f' }] };
    expect([finishReasonFor('tool_calls', tools), finishReasonFor('tool_calls', {}), finishReasonFor('tool_calls', functions)]).to.deep.equal(['tool_calls', 'stop', 'stop']);
    expect([finishReasonFor('function_call', functions), finishReasonFor('function_call', tools)]).to.deep.equal(['function_call', 'stop']);
    for (const reason of ['stop', 'length', 'content_filter', null]) expect(finishReasonFor(reason, {})).to.equal(reason);
  });

  it('choices are copied only when a finish reason changes', () => {
    const choices = [{ index: 0, finish_reason: 'stop' }];
    expect(withClientFinishReasons(choices, {})).to.equal(choices);
    expect(withClientFinishReasons([{ index: 0, finish_reason: 'tool_calls', delta: {} }], {})).to.deep.equal([{ index: 0, finish_reason: 'stop', delta: {} }]);
  });
});
