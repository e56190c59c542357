import { recordFact } from '../../domain/facts';
import type { EventStore } from '../../eventstore/port';
import type { WebQaMessage } from './schemas';

/**
 * A completed turn of a conversation the gateway keeps itself: for bots whose provider keeps no
 * conversation (Ark's bots API takes the whole conversation with every turn). One fact per turn on
 * `webqa-conversation-<id>`: the turn's messages as the client sent them and the bot's answer.
 */
export interface WebQaTurnRecorded {
  readonly type: 'WebQaTurnRecorded';
  readonly data: {
    readonly conversationId: string;
    readonly bot: string;
    readonly messages: readonly WebQaMessage[];
    readonly answer: string;
  };
}

/** The most recent turns sent again with a new one: a conversation's context is bounded as a provider's would be. */
export const MAX_REPLAYED_TURNS = 20;

function streamOf(conversationId: string): string {
  return `webqa-conversation-${conversationId}`;
}

export class ConversationHistory {
  constructor(private readonly store: Pick<EventStore, 'append' | 'readStream' | 'streamHead'>) {}

  /** The messages of the conversation's most recent turns, oldest first, each turn's answer after its messages. */
  async earlierMessages(conversationId: string): Promise<WebQaMessage[]> {
    const head = await this.store.streamHead(streamOf(conversationId));
    if (!head) return [];
    const events = await this.store.readStream(streamOf(conversationId), { fromRevision: Math.max(0, head.revision - MAX_REPLAYED_TURNS + 1) });
    return events.flatMap((event) => {
      if (event.type !== 'WebQaTurnRecorded') return [];
      const turn = event.data as WebQaTurnRecorded['data'];
      return [...turn.messages, { role: 'assistant', content: turn.answer }];
    });
  }

  /** Records a completed turn (many turns of a conversation may be recorded, in any order they finish). */
  async record(conversationId: string, bot: string, messages: readonly WebQaMessage[], answer: string, requestId: string): Promise<void> {
    const fact: WebQaTurnRecorded = { type: 'WebQaTurnRecorded', data: { conversationId, bot, messages, answer } };
    await recordFact(this.store, streamOf(conversationId), fact, { expected: 'any', metadata: { requestId } });
  }
}
