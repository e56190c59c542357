/**
 * The simulated provider's stored responses: what `GET /v1/responses/{id}`, its input items and
 * `previous_response_id` read. In memory and bounded (the newest MAX_STORED), as a test upstream
 * needs no more; the oldest is forgotten first.
 */

/** How many responses the store keeps. */
export const MAX_STORED = 1_000;

export interface StoredResponse {
  /** The final Response object, as the create call answered it. */
  readonly response: object;
  /** This response's input items, each with an id, in the order they were sent. */
  readonly inputItems: readonly object[];
  /** The conversation so far: earlier inputs and outputs, then this one's: the next turn's context. */
  readonly context: readonly unknown[];
}

export class ResponseStore {
  private readonly entries = new Map<string, StoredResponse>();

  constructor(private readonly capacity = MAX_STORED) {}

  put(id: string, stored: StoredResponse): void {
    this.entries.delete(id);
    this.entries.set(id, stored);
    // A Map iterates in insertion order: the first key is the oldest.
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }

  get(id: string): StoredResponse | undefined {
    return this.entries.get(id);
  }

  delete(id: string): boolean {
    return this.entries.delete(id);
  }
}
