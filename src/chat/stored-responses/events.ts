/**
 * A Response the gateway relayed that its provider keeps (`store` not false): stream
 * `response-<id>`, the provider's id. The gateway keeps who made it and where, never its content:
 * the provider holds that, and the gateway relays reads and deletes of it to the channel that made
 * it, for the account that made it only.
 */
export type StoredResponseEvent =
  | {
      type: 'ResponseStored';
      data: {
        readonly responseId: string;
        readonly accountId: string;
        readonly keyId: string;
        readonly model: string;
        readonly channel: string;
        readonly at: string;
        /**
         * The response's input plus output tokens (a number, never content): the context a request
         * that continues it carries, which its provider bills. Optional: events recorded before it
         * was added have none, and read as 0.
         */
        readonly totalTokens?: number;
      };
    }
  | { type: 'StoredResponseDeleted'; data: { readonly responseId: string; readonly accountId: string; readonly at: string } };

/** The tokens a stored response's context adds to a request that continues it; 0 for an event recorded before the field. */
export function contextTokensOf(data: Extract<StoredResponseEvent, { type: 'ResponseStored' }>['data']): number {
  return data.totalTokens ?? 0;
}

export function storedResponseStream(responseId: string): string {
  return `response-${responseId}`;
}

/** The read model's name, which requests wait for (read your writes). */
export const STORED_RESPONSES_VIEW = 'stored_responses';
