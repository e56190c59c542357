import { expect } from 'chai';
import type { TestGateway } from './gateway';
import { assertExchangeValidates, type Exchange, type TrafficRecorder } from './openai-traffic';
import { expectSettledAndAuditClean } from './wait';

/** What one call settled, as the units of its pricing line (`input_tokens`, `output_tokens`, `images`). */
export type Units = Record<string, number>;

interface LedgerEntry {
  readonly type: string;
  readonly request_id: string | null;
  readonly pricing: { lines: { units: Units }[] } | null;
}

/**
 * Checks what a client library did in a session of its own (an account's key, a recorder of its
 * traffic): the exchanges it made (path, status, streamed or not), each validated against OpenAI's
 * document; then, once every reservation closed and the audit is clean, that each answered call
 * was settled with the units expected for it (in order) and that a refused one left nothing in the
 * ledger. Returns the exchanges.
 */
export async function expectTrafficAndMoney(
  gw: TestGateway,
  { key, recorder }: { key: string; recorder: TrafficRecorder },
  expected: readonly { path: string; status: number; streamed: boolean; units?: Units }[],
): Promise<Exchange[]> {
  const exchanges = await recorder.exchanges();
  expect(exchanges.map((e) => ({ path: e.path, status: e.status, streamed: e.streamed !== null }))).to.deep.equal(expected.map(({ units: _units, ...call }) => call));
  for (const exchange of exchanges) assertExchangeValidates(exchange);

  await expectSettledAndAuditClean(gw, [key]);
  const ledger = (await gw.api(key, 'GET', '/v1/account/ledger?limit=100')).body.data as LedgerEntry[];
  const settled = new Map(ledger.filter((e) => e.type === 'settlement').map((e) => [e.request_id, e.pricing!.lines.map((line) => line.units)]));
  expect(settled.size, 'one settlement a call answered').to.equal(expected.filter((call) => call.status === 200).length);
  for (const [i, exchange] of exchanges.entries()) {
    const what = `call ${i}, ${exchange.path}`;
    if (exchange.status === 200) expect(settled.get(exchange.requestId), what).to.deep.equal([expected[i]!.units]);
    else expect(ledger.filter((e) => e.request_id === exchange.requestId), `${what}: nothing reserved`).to.deep.equal([]);
  }
  return exchanges;
}
