import type { Pool } from 'pg';
import type { Config } from '../../config';
import { recordFact } from '../../domain/facts';
import { WrongExpectedVersionError, type EventStore } from '../../eventstore/port';
import { READ_MODEL_SCHEMA } from '../../projections-runtime/consumer';
import type { ConsumerProgress } from '../../projections-runtime/progress';
import { STORED_RESPONSES_VIEW, storedResponseStream, type StoredResponseEvent } from './events';

/** What the gateway knows of a stored Response: whose it is and which channel holds it. */
export interface StoredResponse {
  readonly responseId: string;
  readonly accountId: string;
  readonly model: string;
  readonly channel: string;
  /** Its input plus output tokens: the context a request continuing it carries (0 when recorded before that was kept). */
  readonly totalTokens: number;
}

export interface StoredResponsesDeps {
  readonly pool: Pool;
  readonly store: Pick<EventStore, 'append' | 'readStream'>;
  readonly progress: Pick<ConsumerProgress, 'waitFor' | 'waitForStream'>;
  readonly config: Pick<Config, 'projectionWaitMs'>;
}

/**
 * A provider's response id the gateway can record: the id names an event stream and reaches the
 * provider again in a path, so only the characters OpenAI's ids use (`resp_…`), at most 200.
 */
const RECORDABLE_ID = /^[A-Za-z0-9_-]{1,200}$/;

/** The record of stored Responses: the event of each one relayed or deleted, and its lookup. */
export class StoredResponses {
  constructor(private readonly deps: StoredResponsesDeps) {}

  /**
   * Records a relayed Response. It does not wait for the read model: every Responses create
   * records one, and only a later read pays for freshness (`find` waits for the response's stream,
   * so a read right after the create finds it). False when it is not recorded: an id the gateway
   * cannot use, or one already recorded (a provider reusing an id must not hand another account's
   * record over).
   */
  async record(data: Extract<StoredResponseEvent, { type: 'ResponseStored' }>['data'], requestId: string): Promise<boolean> {
    if (!RECORDABLE_ID.test(data.responseId)) return false;
    try {
      await recordFact(this.deps.store, storedResponseStream(data.responseId), { type: 'ResponseStored', data }, { expected: 'no_stream', metadata: { requestId } });
      return true;
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) return false;
      throw err;
    }
  }

  /** A live Response of this account; null for any other id (unknown, forged, another account's, deleted). */
  async find(accountId: string, responseId: string): Promise<StoredResponse | null> {
    if (!RECORDABLE_ID.test(responseId)) return null;
    await this.deps.progress.waitForStream(storedResponseStream(responseId), [STORED_RESPONSES_VIEW], this.deps.config.projectionWaitMs);
    const { rows } = await this.deps.pool.query<{ response_id: string; account_id: string; model: string; channel: string; total_tokens: string }>(
      `SELECT response_id, account_id, model, channel, total_tokens FROM ${READ_MODEL_SCHEMA}.stored_responses WHERE response_id = $1 AND account_id = $2 AND deleted_at IS NULL`,
      [responseId, accountId],
    );
    const row = rows[0];
    return row ? { responseId: row.response_id, accountId: row.account_id, model: row.model, channel: row.channel, totalTokens: Number(row.total_tokens) } : null;
  }

  /**
   * Records the deletion of a Response `find` returned. False when a concurrent delete recorded it
   * first (the stream has moved past the one ResponseStored event).
   */
  async deleted(response: StoredResponse, at: string, requestId: string): Promise<boolean> {
    try {
      const event: StoredResponseEvent = { type: 'StoredResponseDeleted', data: { responseId: response.responseId, accountId: response.accountId, at } };
      const appended = await recordFact(this.deps.store, storedResponseStream(response.responseId), event, { expected: 0, metadata: { requestId } });
      await this.deps.progress.waitFor(appended.position, [STORED_RESPONSES_VIEW], this.deps.config.projectionWaitMs);
      return true;
    } catch (err) {
      if (err instanceof WrongExpectedVersionError) return false;
      throw err;
    }
  }
}
