/**
 * A chat provider whose answers a test writes: the simulator's chat route behind a script. Each
 * call's body is kept (what the gateway sent upstream); a call with a script queued gets that
 * answer, a JSON completion or a stream of chunks (left open with `thenHang`, until the gateway
 * goes away); without one, the simulator answers as always. A script may be a function of the
 * request, for clients whose requests a test does not spell out (a library's structured output).
 */
import { chatRoutes } from '../../simulator/chat';
import type { SimContext } from '../../simulator/server';
import type { TestGateway } from './gateway';

export type ChatScript = { readonly answer: object } | { readonly chunks: readonly object[]; readonly thenHang?: boolean };

export interface ScriptedChat {
  /** The bodies the upstream received, in order. */
  readonly received: Record<string, any>[];
  /** Queues the answer to the next call. */
  next(script: ChatScript | ((request: Record<string, any>) => ChatScript)): void;
}

export function scriptedChatUpstream(gw: TestGateway): ScriptedChat {
  const received: Record<string, any>[] = [];
  const scripts: (ChatScript | ((request: Record<string, any>) => ChatScript))[] = [];
  const simulated = chatRoutes().find((route) => route.path === '/v1/chat/completions')!;
  gw.simulator.addRoutes([
    {
      method: 'POST',
      path: '/v1/chat/completions',
      handler: async (ctx: SimContext) => {
        const body = ctx.body as Record<string, any>;
        received.push(body);
        const next = scripts.shift();
        if (!next) return simulated.handler(ctx);
        const script = typeof next === 'function' ? next(body) : next;
        if ('answer' in script) {
          ctx.res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(script.answer));
          return;
        }
        ctx.res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const chunk of script.chunks) ctx.res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        if (script.thenHang) await new Promise((closed) => ctx.res.once('close', closed));
        else ctx.res.end('data: [DONE]\n\n');
      },
    },
  ]);
  return { received, next: (script) => scripts.push(script) };
}

/** A chat completion as a provider sends it: `choices` given as [message, finish_reason] pairs. */
export function completion(choices: readonly (readonly [message: object, finish: string])[], usage?: object): object {
  return {
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: 1_767_225_600,
    model: 'upstream-model',
    choices: choices.map(([message, finish], index) => ({ index, message: { role: 'assistant', content: null, refusal: null, ...message }, finish_reason: finish, logprobs: null })),
    ...(usage ? { usage } : {}),
  };
}

/** A chat completion chunk as a provider streams it. */
export function chunk(choices: readonly object[], usage?: object): object {
  return { id: 'chatcmpl-scripted', object: 'chat.completion.chunk', created: 1_767_225_600, model: 'upstream-model', choices, ...(usage ? { usage } : {}) };
}

/** A tool call as a completion's message carries it. */
export function toolCall(name: string, args: object, id = 'call_1'): object {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } };
}
