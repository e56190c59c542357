import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Pool as PgPool } from 'pg';
import { Pool } from 'undici';
import { PostgresEventStore } from '../src/eventstore/postgres/store';

/**
 * The floor for any Node.js gateway on this machine: one process that reads the request, forwards
 * it to the upstream over an undici keep-alive pool and writes the answer back; no routing,
 * authentication, validation, ledger or logging. `npm run bench -- peer` runs it beside the others,
 * so the gateway's cost reads as what it adds above what Node.js itself costs.
 *
 * With BARE_PROXY_DATABASE_URL it is the floor for a gateway with a durable ledger on this event
 * store: each request also appends a reservation-sized event through the same `es_append`
 * (PostgresEventStore, which group-commits appends across streams under load), committed while
 * the upstream call runs, and a settlement-sized one after it, durable before the answer ends
 * (see `forward`). A request takes a stream no other request in flight uses (one per
 * concurrent request, reused, as a gateway appends to its accounts' existing streams), so no lock
 * is ever waited for. No decisions, balances or read models: what two durable appends cost.
 * Streamed answers are relayed as they come (the ledger floor's first byte waits for the
 * reservation's commit), so `bench chat` measures its time to first byte.
 * Environment: BARE_PROXY_PORT, BARE_PROXY_UPSTREAM (the simulator's URL), BARE_PROXY_DATABASE_URL.
 */
const upstream = new Pool(process.env.BARE_PROXY_UPSTREAM!, { connections: 256 });
const databaseUrl = process.env.BARE_PROXY_DATABASE_URL;
const pool = databaseUrl ? new PgPool({ connectionString: databaseUrl, max: 20 }) : null;
const store = pool ? new PostgresEventStore({ pool }) : null;

/** Event bodies the size of the gateway's FundsReserved and ReservationSettled. */
const reservation = {
  reservationId: 'rsv_0000000000000000000000',
  amount: 262_164,
  purpose: { kind: 'request', ref: 'req_000000000000000000000', description: 'chat-fast', model: 'chat-fast', actor: 'key_0000000000000000', endpoint: 'POST /v1/chat/completions' },
  expiresAt: '2026-01-01T00:00:00.000Z',
  at: '2026-01-01T00:00:00.000Z',
};
const settlement = {
  reservationId: 'rsv_0000000000000000000000',
  amount: 84,
  reservedAmount: 262_164,
  pricing: { lines: [{ kind: 'input_tokens', quantity: 5, unitPrice: 1, amount: 5 }, { kind: 'output_tokens', quantity: 20, unitPrice: 4, amount: 80 }] },
  usage: { model: 'chat-fast', prompt_tokens: 5, completion_tokens: 20, total_tokens: 25 },
  at: '2026-01-01T00:00:00.000Z',
};
const metadata = { requestId: 'req_000000000000000000000' };

/** Streams no request in flight uses, with the revision each stands at. */
const idle: { id: string; revision: number }[] = [];

/**
 * Forwards one request. With the ledger, the reservation commits while the upstream call runs and
 * is durable before the first byte of the answer; the settlement is durable before the answer
 * ends (for an event stream: relayed chunk by chunk, `[DONE]` included, then the settlement, then
 * the end; the gateway settles before it sends `[DONE]`). Any other answer goes whole, with its length.
 */
async function forward(req: http.IncomingMessage, res: http.ServerResponse, events: PostgresEventStore | null): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const stream = events ? (idle.pop() ?? { id: `floor-${randomUUID()}`, revision: -1 }) : null;
  /** Where the stream stands: -1 new, NaN while an append is out or after one failed. */
  let revision = stream?.revision ?? -1;
  const append = async (event: { type: string; data: unknown }): Promise<void> => {
    if (!events || !stream) return;
    const expected = revision;
    revision = NaN;
    revision = (await events.append(stream.id, [{ ...event, metadata }], { expectedVersion: expected === -1 ? 'no_stream' : expected })).nextExpectedVersion;
  };
  try {
    const [answered, reserved] = await Promise.allSettled([
      upstream.request({ method: 'POST', path: req.url ?? '/', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) }),
      append({ type: 'FundsReserved', data: reservation }),
    ]);
    if (answered.status === 'rejected' || reserved.status === 'rejected') {
      if (answered.status === 'fulfilled') answered.value.body.destroy();
      throw answered.status === 'rejected' ? answered.reason : (reserved as PromiseRejectedResult).reason;
    }
    const answer = answered.value;
    const settle = (): Promise<void> => append({ type: 'ReservationSettled', data: settlement });
    const contentType = String(answer.headers['content-type'] ?? 'application/json');
    if (contentType.startsWith('text/event-stream')) {
      res.writeHead(answer.statusCode, { 'content-type': contentType });
      for await (const chunk of answer.body) res.write(chunk);
      await settle();
      res.end();
      return;
    }
    const body = Buffer.from(await answer.body.arrayBuffer());
    await settle();
    res.writeHead(answer.statusCode, { 'content-type': contentType, 'content-length': body.length });
    res.end(body);
  } finally {
    // Used again at the revision its last append left, whatever failed after it; not after a
    // failed append, which leaves the revision unknown.
    if (stream && revision >= 0) idle.push({ id: stream.id, revision });
  }
}

const server = http.createServer((req, res) => {
  forward(req, res, store).catch((err: unknown) => {
    if (res.headersSent) res.destroy();
    else res.writeHead(502).end(String(err));
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.BARE_PROXY_PORT), '127.0.0.1');
process.once('SIGTERM', () =>
  server.close(() => {
    void upstream.close();
    void store?.close().then(() => pool?.end());
  }),
);
