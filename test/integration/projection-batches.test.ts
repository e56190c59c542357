import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import type { Database } from '../../src/db/database';
import { inTransaction } from '../../src/db/migrations';
import { accountStream, type AccountEvent } from '../../src/domain/account/events';
import type { RecordedEvent } from '../../src/eventstore/port';
import { applyEvents, type Projection } from '../../src/projections-runtime/consumer';
import { ensureProjectionTables } from '../../src/projections-runtime/tables';
import { balancesProjection } from '../../projections/balances';
import { ledgerProjection } from '../../projections/ledger';
import { requestLogProjection } from '../../projections/request-log';
import { usageProjection } from '../../projections/usage';
import { createTestDatabase } from '../support/database';

/**
 * The money read models write set-wise, a batch at a time. Whatever way the log is cut into
 * batches, the rows must be the ones a one-event-at-a-time fold gives, and those must be right.
 */
describe('money projections (ledger, balances, usage, request log) fold a batch as they fold its events one by one @integration', () => {
  let db: Database;
  before(async () => {
    db = await createTestDatabase(4);
  });
  after(async () => {
    await db.close();
  });

  const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
  const later = at(3600);
  const revisions = new Map<string, number>();
  let position = 0n;
  /** An event as the log holds it: these are of the shapes recorded before reservations named their actor, model and endpoint, so the fold also upcasts. */
  function recorded(accountId: string, event: { type: AccountEvent['type']; data: object }): RecordedEvent {
    const stream = accountStream(accountId);
    const revision = revisions.get(stream) ?? 0;
    revisions.set(stream, revision + 1);
    position += 1n;
    return { id: randomUUID(), streamId: stream, revision, type: event.type, data: event.data, metadata: {}, position: { major: position, minor: 0n }, recordedAt: new Date() };
  }
  const purpose = (ref: string) => ({ kind: 'request' as const, ref, description: 'chat-fast' });

  // Two accounts interleaved: an overrun, a release, two refunds of one charge, one still open.
  const log: RecordedEvent[] = [
    recorded('acct_a', { type: 'AccountOpened', data: { accountId: 'acct_a', name: 'A', openedAt: at(0) } }),
    recorded('acct_a', { type: 'CreditAdded', data: { entryId: 'cred_1', amount: 1000, reference: 'top-up-1', note: 'first', at: at(1) } }),
    recorded('acct_b', { type: 'AccountOpened', data: { accountId: 'acct_b', name: 'B', openedAt: at(2) } }),
    recorded('acct_a', { type: 'FundsReserved', data: { reservationId: 'res_1', amount: 300, purpose: purpose('req_1'), expiresAt: later, at: at(3) } }),
    recorded('acct_b', { type: 'CreditAdded', data: { entryId: 'cred_2', amount: 500, reference: 'top-up-2', note: null, at: at(4) } }),
    recorded('acct_a', { type: 'FundsReserved', data: { reservationId: 'res_2', amount: 200, purpose: purpose('req_2'), expiresAt: later, at: at(5) } }),
    recorded('acct_b', { type: 'FundsReserved', data: { reservationId: 'res_3', amount: 100, purpose: purpose('req_3'), expiresAt: later, at: at(6) } }),
    recorded('acct_a', {
      type: 'ReservationSettled',
      data: { reservationId: 'res_1', amount: 350, reservedAmount: 300, overrun: 50, usage: { completion_tokens: 35 }, at: at(7) },
    }),
    recorded('acct_a', { type: 'ReservationReleased', data: { reservationId: 'res_2', amount: 200, reason: 'upstream failed', at: at(8) } }),
    recorded('acct_b', { type: 'ReservationSettled', data: { reservationId: 'res_3', amount: 80, reservedAmount: 100, overrun: 0, usage: {}, at: at(9) } }),
    recorded('acct_a', { type: 'ChargeRefunded', data: { refundId: 'ref_1', reservationId: 'res_1', amount: 100, reason: 'goodwill', at: at(10) } }),
    recorded('acct_b', { type: 'ChargeRefunded', data: { refundId: 'ref_2', reservationId: 'res_3', amount: 80, reason: 'task failed', at: at(11) } }),
    recorded('acct_a', { type: 'ChargeRefunded', data: { refundId: 'ref_3', reservationId: 'res_1', amount: 20, reason: 'rounding', at: at(12) } }),
    recorded('acct_a', { type: 'FundsReserved', data: { reservationId: 'res_4', amount: 50, purpose: purpose('req_4'), expiresAt: later, at: at(13) } }),
  ];
  const projections: Projection[] = [ledgerProjection, balancesProjection, usageProjection, requestLogProjection];

  /** Folds the log cut into batches of `size` into fresh tables in `schema` (of `on`); returns every row. */
  async function fold(schema: string, size: number, on: Database = db): Promise<Record<string, unknown[]>> {
    await ensureProjectionTables(on.pool, projections, schema);
    for (let i = 0; i < log.length; i += size) {
      const batch = log.slice(i, i + size);
      const client = await on.pool.connect();
      try {
        await inTransaction(client, async () => {
          await client.query(`SET LOCAL search_path TO ${schema}, public`);
          for (const projection of projections) await applyEvents(projection, client, batch);
        });
      } finally {
        client.release();
      }
    }
    const rows = async (sql: string) => (await on.pool.query(sql)).rows;
    return {
      balances: await rows(`SELECT * FROM ${schema}.balances ORDER BY account_id`),
      entries: await rows(`SELECT * FROM ${schema}.ledger_entries ORDER BY account_id, revision`),
      reservations: await rows(`SELECT * FROM ${schema}.reservations ORDER BY reservation_id`),
      usage: await rows(`SELECT * FROM ${schema}.usage_records ORDER BY account_id, revision`),
      months: await rows(`SELECT * FROM ${schema}.usage_months ORDER BY account_id, month`),
      requests: await rows(`SELECT * FROM ${schema}.request_log ORDER BY reservation_id`),
      spend: await rows(`SELECT * FROM ${schema}.actor_spend ORDER BY account_id, actor`),
    };
  }

  it('gives the same rows for batches of 1, 3, 5 and the whole log, and those rows are right', async () => {
    const oneByOne = await fold('fold_1', 1);
    for (const size of [3, 5, log.length]) expect(await fold(`fold_${size}`, size), `batches of ${size}`).to.deep.equal(oneByOne);

    expect(oneByOne.balances.map((b: any) => [b.account_id, b.credited, b.settled, b.refunded, b.frozen, b.available, b.revision])).to.deep.equal([
      ['acct_a', '1000', '350', '120', '50', '720', '8'],
      ['acct_b', '500', '80', '80', '0', '500', '4'],
    ]);
    expect(oneByOne.entries.map((e: any) => [e.account_id, e.entry_type, e.amount, e.available_after, e.frozen_after, e.description])).to.deep.equal([
      ['acct_a', 'credit', '1000', '1000', '0', 'first'],
      ['acct_a', 'reservation', '300', '700', '300', 'chat-fast'],
      ['acct_a', 'reservation', '200', '500', '500', 'chat-fast'],
      ['acct_a', 'settlement', '350', '450', '200', 'overrun of 50'],
      ['acct_a', 'release', '200', '650', '0', 'upstream failed'],
      ['acct_a', 'refund', '100', '750', '0', 'goodwill'],
      ['acct_a', 'refund', '20', '770', '0', 'rounding'],
      ['acct_a', 'reservation', '50', '720', '50', 'chat-fast'],
      ['acct_b', 'credit', '500', '500', '0', null],
      ['acct_b', 'reservation', '100', '400', '100', 'chat-fast'],
      ['acct_b', 'settlement', '80', '420', '0', null],
      ['acct_b', 'refund', '80', '500', '0', 'task failed'],
    ]);
    expect(oneByOne.reservations.map((r: any) => [r.reservation_id, r.status, r.settled_amount, r.refunded_amount, r.close_reason, r.closed_at?.toISOString() ?? null])).to.deep.equal([
      ['res_1', 'settled', '350', '120', null, at(7)],
      ['res_2', 'released', null, '0', 'upstream failed', at(8)],
      ['res_3', 'settled', '80', '80', null, at(9)],
      ['res_4', 'open', null, '0', null, null],
    ]);
    expect(oneByOne.usage.map((u: any) => [u.account_id, u.entry_type, u.amount, u.overrun, u.month, u.day, u.note])).to.deep.equal([
      ['acct_a', 'credit', '1000', '0', '2026-01', '2026-01-01', 'first'],
      ['acct_a', 'charge', '350', '50', '2026-01', '2026-01-01', null],
      ['acct_a', 'refund', '100', '0', '2026-01', '2026-01-01', 'goodwill'],
      ['acct_a', 'refund', '20', '0', '2026-01', '2026-01-01', 'rounding'],
      ['acct_b', 'credit', '500', '0', '2026-01', '2026-01-01', null],
      ['acct_b', 'charge', '80', '0', '2026-01', '2026-01-01', null],
      ['acct_b', 'refund', '80', '0', '2026-01', '2026-01-01', 'task failed'],
    ]);
    expect(oneByOne.months.map((m: any) => [m.account_id, m.month, m.current])).to.deep.equal([
      ['acct_a', '2026-01', true],
      ['acct_b', '2026-01', true],
    ]);
    // Settlements of this age name no channel and no pricing: their lines have none and no units.
    const requestLines = oneByOne.requests as { reservation_id: string; account_id: string; outcome: string; reserved: string; amount: string | null; refunded: string; channel: string | null; units: object | null; reason: string | null; closed_at: Date | null }[];
    expect(requestLines.map((r) => [r.reservation_id, r.account_id, r.outcome, r.reserved, r.amount, r.refunded, r.channel, r.units, r.reason, r.closed_at?.toISOString() ?? null])).to.deep.equal([
      ['res_1', 'acct_a', 'settled', '300', '350', '120', null, {}, null, at(7)],
      ['res_2', 'acct_a', 'released', '200', null, '0', null, null, 'upstream failed', at(8)],
      ['res_3', 'acct_b', 'settled', '100', '80', '80', null, {}, null, at(9)],
      ['res_4', 'acct_a', 'open', '50', null, '0', null, null, null, null],
    ]);
    // Each actor's charges less their refunds, the overrun included; b's charge refunded whole
    // still has its row, whether its settlement and refund fell in one batch or two.
    const spend = oneByOne.spend as { account_id: string; actor: string; spent: string }[];
    expect(spend.map((s) => [s.account_id, s.actor, s.spent])).to.deep.equal([
      ['acct_a', 'unknown', '230'],
      ['acct_b', 'unknown', '0'],
    ]);
  });

  it('parses each statement once per connection, and a statement prepared under one schema writes into the next', async () => {
    // One connection: every batch of both folds goes through it, the second under another search_path.
    const single = await createTestDatabase(1);
    try {
      const first = await fold('prepared_1', 3, single);
      expect(await fold('prepared_2', 3, single)).to.deep.equal(first);
      expect(first.entries).to.have.length(12);
      const { rows } = await single.pool.query<{ statement: string; runs: number }>(
        'SELECT statement, generic_plans + custom_plans AS runs FROM pg_prepared_statements ORDER BY statement',
      );
      const runsOf = (start: string): number[] => rows.filter((r) => r.statement.trimStart().startsWith(start)).map((r) => Number(r.runs));
      // Five batches in each fold: each statement prepared once, run in both schemas.
      expect(runsOf('WITH r AS (SELECT * FROM ROWS FROM'), 'the ledger entries').to.deep.equal([10]);
      expect(runsOf('INSERT INTO usage_records'), 'the usage records').to.have.length(1);
      expect(runsOf('INSERT INTO usage_records')[0]).to.be.greaterThan(5);
      expect(runsOf('UPDATE balances b SET'), 'the balances').to.have.length(1);
      expect(runsOf('UPDATE balances b SET')[0]).to.be.greaterThan(5);
    } finally {
      await single.close();
    }
  });
});
