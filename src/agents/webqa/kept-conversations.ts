import type { Pool } from 'pg';
import type { Migration } from '../../db/migrations';

/**
 * The conversations the gateway keeps for bots whose provider keeps none (Ark's bots API takes the
 * whole conversation with every turn). Conversation content is personal data with a lifetime: it
 * lives in these two plain tables, never in the append-only event log, keyed by the account and
 * the conversation (another account's id names another row), as text only (a media link from an
 * earlier turn may have expired by the next), and it is deleted `ttlMs` after the conversation's
 * last turn (WEBQA_HISTORY_TTL_MS): an expired conversation is never read, and purgeExpired deletes
 * it (the agents feature runs it periodically).
 */
export const keptConversationMigrations: readonly Migration[] = [
  {
    version: 410,
    name: 'web Q&A conversations kept by the gateway',
    sql: `
      CREATE TABLE webqa_conversations (
        account_id text NOT NULL,
        conversation_id text NOT NULL,
        -- last turn + WEBQA_HISTORY_TTL_MS: read before it, deleted after it
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, conversation_id)
      );
      CREATE INDEX webqa_conversations_expiry ON webqa_conversations (expires_at);
      CREATE TABLE webqa_turns (
        account_id text NOT NULL,
        conversation_id text NOT NULL,
        turn bigserial,
        bot text NOT NULL,
        -- [{role, content}], content text only
        messages jsonb NOT NULL,
        answer text NOT NULL,
        recorded_at timestamptz NOT NULL,
        PRIMARY KEY (account_id, conversation_id, turn),
        FOREIGN KEY (account_id, conversation_id) REFERENCES webqa_conversations ON DELETE CASCADE
      );
    `,
  },
];

/** A message of a kept turn: its text (a message's text parts joined, media left out). */
export interface KeptMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

/** A completed turn: the client's messages and the bot's answer. */
export interface KeptTurn {
  readonly messages: readonly KeptMessage[];
  readonly answer: string;
}

/** The most recent turns read back with a new one: a conversation's context is bounded as a provider's would be. */
export const MAX_REPLAYED_TURNS = 20;

export class KeptConversations {
  constructor(
    private readonly pool: Pick<Pool, 'query'>,
    /** How long a conversation is kept after its last turn. */
    private readonly ttlMs: number,
  ) {}

  /** The account's conversation's most recent turns (at most MAX_REPLAYED_TURNS), oldest first; none once it expired. */
  async recentTurns(accountId: string, conversationId: string, now: Date): Promise<KeptTurn[]> {
    const { rows } = await this.pool.query<{ messages: KeptMessage[]; answer: string }>(
      `SELECT t.messages, t.answer FROM webqa_turns t
         JOIN webqa_conversations c USING (account_id, conversation_id)
        WHERE c.account_id = $1 AND c.conversation_id = $2 AND c.expires_at > $3
        ORDER BY t.turn DESC LIMIT $4`,
      [accountId, conversationId, now, MAX_REPLAYED_TURNS],
    );
    return rows.reverse().map((row) => ({ messages: row.messages, answer: row.answer }));
  }

  /**
   * Records a completed turn (turns of one conversation may be recorded in any order they finish)
   * and keeps the conversation `ttlMs` from now. A conversation that expired and was not purged yet
   * starts afresh: its old turns are deleted in the same statement, never read again.
   */
  async record(accountId: string, conversationId: string, bot: string, turn: KeptTurn, now: Date): Promise<void> {
    await this.pool.query(
      `WITH stale AS (
         DELETE FROM webqa_turns t USING webqa_conversations c
          WHERE c.account_id = $1 AND c.conversation_id = $2 AND c.expires_at <= $6
            AND t.account_id = c.account_id AND t.conversation_id = c.conversation_id
       ), conversation AS (
         INSERT INTO webqa_conversations (account_id, conversation_id, expires_at) VALUES ($1, $2, $7)
         ON CONFLICT (account_id, conversation_id) DO UPDATE SET expires_at = GREATEST(webqa_conversations.expires_at, EXCLUDED.expires_at)
         RETURNING account_id, conversation_id
       )
       INSERT INTO webqa_turns (account_id, conversation_id, bot, messages, answer, recorded_at)
       SELECT account_id, conversation_id, $3, $4::jsonb, $5, $6 FROM conversation`,
      [accountId, conversationId, bot, JSON.stringify(turn.messages), turn.answer, now, new Date(now.getTime() + this.ttlMs)],
    );
  }

  /** Deletes the conversations expired by `now`, their turns with them; how many. */
  async purgeExpired(now: Date): Promise<number> {
    const { rowCount } = await this.pool.query('DELETE FROM webqa_conversations WHERE expires_at <= $1', [now]);
    return rowCount ?? 0;
  }
}

/** How often expired conversations are purged (their reads already skip them). */
export const PURGE_INTERVAL_MS = 3_600_000;

/**
 * Purges expired conversations every `everyMs` until stopped (each gateway process runs one: a
 * purge is a single idempotent DELETE). A failed purge is reported and tried again at the next.
 */
export function purgeExpiredPeriodically(conversations: KeptConversations, options: { everyMs: number; clock: () => Date; onError: (err: unknown) => void }): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = conversations.purgeExpired(options.clock()).catch(options.onError);
  }, options.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
