/**
 * A Response the gateway relayed that its provider keeps (`store` not false): stream
 * `response-<id>`, the provider's id. The gateway keeps who made it and where, never its content:
 * the provider holds that, and the gateway relays reads and deletes of it to the channel that made
 * it, for the account that made it only.
 */
export type StoredResponseEvent =
  | {
      type: 'ResponseStored';
      data: { readonly responseId: string; readonly accountId: string; readonly keyId: string; readonly model: string; readonly channel: string; readonly at: string };
    }
  | { type: 'StoredResponseDeleted'; data: { readonly responseId: string; readonly accountId: string; readonly at: string } };

export function storedResponseStream(responseId: string): string {
  return `response-${responseId}`;
}

/** The read model's name, which requests wait for (read your writes). */
export const STORED_RESPONSES_VIEW = 'stored_responses';
