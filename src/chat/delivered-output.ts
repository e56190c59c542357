/**
 * The output items of a streamed Response as far as its events delivered them, so that a
 * `response.failed` the gateway ends a broken stream with carries what the client already has
 * (OpenAI's failed response holds its output so far), not `output: []`.
 */

interface ContentPart {
  type: string;
  text?: string;
  [more: string]: unknown;
}

interface OutputItem {
  type: string;
  status?: string;
  content?: ContentPart[];
  /** A function call's arguments, as far as their deltas came. */
  arguments?: string;
  [more: string]: unknown;
}

/** The members of the stream events the output is built from. */
export interface OutputEvent {
  readonly type: string;
  readonly output_index?: number;
  readonly content_index?: number;
  readonly item?: unknown;
  readonly part?: unknown;
  readonly delta?: string;
}

/**
 * Indexes the provider gives beyond this are not kept: an array grown to a provider's
 * `output_index: 1e9` would cost its walk a billion steps.
 */
const MAX_INDEX = 1_000;

/** `index` when it can name a kept item or part, else null. */
function keptIndex(index: unknown): number | null {
  return Number.isInteger(index) && (index as number) >= 0 && (index as number) < MAX_INDEX ? (index as number) : null;
}

export class DeliveredOutput {
  private readonly items: OutputItem[] = [];

  /** Takes in one event; copies what it keeps, so the events relayed are never changed. */
  observe(event: OutputEvent): void {
    switch (event.type) {
      case 'response.output_item.added':
      case 'response.output_item.done': {
        const item = event.item as OutputItem;
        const at = keptIndex(event.output_index ?? this.items.length);
        if (at !== null && item) this.items[at] = { ...item, ...(Array.isArray(item.content) ? { content: item.content.map((part) => ({ ...part })) } : {}) };
        return;
      }
      case 'response.content_part.added': {
        const item = this.items[event.output_index ?? -1];
        const at = keptIndex(event.content_index ?? item?.content?.length ?? 0);
        if (item && at !== null) (item.content ??= [])[at] = { ...(event.part as ContentPart) };
        return;
      }
      case 'response.output_text.delta': {
        const part = this.items[event.output_index ?? -1]?.content?.[event.content_index ?? -1];
        if (part) part.text = (part.text ?? '') + (event.delta ?? '');
        return;
      }
      case 'response.function_call_arguments.delta': {
        const item = this.items[event.output_index ?? -1];
        if (item?.type === 'function_call') item.arguments = (item.arguments ?? '') + (event.delta ?? '');
        return;
      }
    }
  }

  /** The items delivered, those the stream had not finished marked `incomplete`. */
  output(): OutputItem[] {
    return this.items.filter(Boolean).map((item) => (item.status === 'in_progress' ? { ...item, status: 'incomplete' } : item));
  }
}
