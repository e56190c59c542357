import { expect } from 'chai';
import { ledgerLines, pricingText, type LedgerEntry, type Translate } from '../../web/src/ledger-lines';
import { unitsText } from '../../web/src/units';

/** How the dashboard's ledger reads entries as lines (web/src/ledger-lines.ts). */
describe('the dashboard\'s ledger lines', () => {
  let sequence = 0;
  let available = 10_000_000;
  let frozen = 0;
  /** An entry as the API gives it, its balances following from the ones before. */
  function entry(type: LedgerEntry['type'], amount: number, reservationId: string | null = null, extra: Partial<LedgerEntry> = {}): LedgerEntry {
    sequence += 1;
    const deltas: Record<LedgerEntry['type'], [number, number]> = {
      credit: [amount, 0],
      refund: [amount, 0],
      reservation: [-amount, amount],
      settlement: [extra.available_delta ?? 0, extra.frozen_delta ?? 0],
      release: [amount, -amount],
    };
    const [availableDelta, frozenDelta] = deltas[type];
    available += availableDelta;
    frozen += frozenDelta;
    return {
      id: `e${sequence}`,
      sequence,
      type,
      amount,
      available_delta: availableDelta,
      frozen_delta: frozenDelta,
      available_after: available,
      frozen_after: frozen,
      reservation_id: reservationId,
      reference: null,
      description: null,
      key_id: type === 'credit' ? null : 'key_a',
      actor: type === 'credit' ? null : 'key_a',
      model: type === 'credit' ? null : 'chat-fast',
      endpoint: null,
      request_id: null,
      task_id: null,
      pricing: null,
      created_at: new Date(Date.UTC(2026, 11, 5, 0, 0, sequence)).toISOString(),
      ...extra,
    };
  }
  /** A settlement of `charged` against a hold of `held`: the difference goes back to available, the hold leaves frozen. */
  const settle = (charged: number, held: number, reservationId: string) => entry('settlement', charged, reservationId, { available_delta: held - charged, frozen_delta: -held });
  beforeEach(() => {
    sequence = 0;
    available = 10_000_000;
    frozen = 0;
  });

  it('reads a reservation and its settlement as one charge, at the settlement\'s place, with the balance after it', () => {
    const credit = entry('credit', 10_000_000);
    const hold1 = entry('reservation', 1_250_000, 'rsv_1');
    const hold2 = entry('reservation', 500_000, 'rsv_2');
    const settled1 = settle(169, 1_250_000, 'rsv_1');
    const released2 = entry('release', 500_000, 'rsv_2');
    const refund = entry('refund', 169, 'rsv_1');
    const lines = ledgerLines([credit, hold1, hold2, settled1, released2, refund]);
    expect(lines.map((l) => [l.kind, l.entries.map((e) => e.id), l.signed, l.held, l.last.available_after])).to.deep.equal([
      ['credit', ['e1'], 10_000_000, null, 20_000_000],
      ['charge', ['e2', 'e4'], -169, 1_250_000, 20_000_000 - 500_000 - 169],
      ['released', ['e3', 'e5'], null, 500_000, 20_000_000 - 169],
      ['refund', ['e6'], 169, null, 20_000_000],
    ]);
  });

  it('shows a reservation whose settlement is not loaded (a later page) as a hold, and joins them once it is, counting each entry once', () => {
    const credit = entry('credit', 1_000_000);
    const hold = entry('reservation', 300_000, 'rsv_1');
    const settled = settle(1_000, 300_000, 'rsv_1');
    const firstPage = ledgerLines([credit, hold]);
    expect(firstPage.map((l) => [l.kind, l.signed, l.held])).to.deep.equal([
      ['credit', 1_000_000, null],
      ['hold', null, 300_000],
    ]);
    // The next page loaded; the first page loaded again (a reload) gives the same entries twice.
    const both = ledgerLines([credit, hold, settled, credit, hold]);
    expect(both.map((l) => [l.kind, l.entries.map((e) => e.id), l.signed])).to.deep.equal([
      ['credit', ['e1'], 1_000_000],
      ['charge', ['e2', 'e3'], -1_000],
    ]);
    const counted = both.flatMap((l) => l.entries.map((e) => e.id));
    expect(counted).to.deep.equal([...new Set(counted)]);
    expect(both.reduce((sum, l) => sum + (l.signed ?? 0), 0)).to.equal(1_000_000 - 1_000);
  });

  it('keeps a settlement whose reservation a filter left out as a charge of its own, and orders lines by sequence whatever the order given', () => {
    entry('credit', 1_000_000);
    entry('reservation', 300_000, 'rsv_1');
    const settled = settle(2_000, 300_000, 'rsv_1');
    const hold = entry('reservation', 100_000, 'rsv_2');
    expect(ledgerLines([hold, settled]).map((l) => [l.kind, l.entries.map((e) => e.id), l.signed, l.held])).to.deep.equal([
      ['charge', ['e3'], -2_000, null],
      ['hold', ['e4'], null, 100_000],
    ]);
  });

  it('carries the settlement\'s pricing on the charge', () => {
    entry('reservation', 300_000, 'rsv_1');
    const pricing = { amount: 169, lines: [{ per: 1_000_000, units: { input_tokens: 9, output_tokens: 40 }, unit_prices: { input_tokens: 1_000_000, output_tokens: 4_000_000 }, amount: 169 }] };
    const settled = entry('settlement', 169, 'rsv_1', { available_delta: 300_000 - 169, frozen_delta: -300_000, pricing });
    expect(ledgerLines([settled])[0]!.pricing).to.deep.equal(pricing);
  });

  const english: Translate = (text, values) => text.replace(/\{(\w+)\}/g, (_, name: string) => String(values?.[name]));

  it('writes units and unit prices as a sum of terms, per million tokens, per image, per hour of milliseconds', () => {
    expect(
      pricingText({ amount: 2_600, lines: [{ per: 1_000_000, units: { input_tokens: 1_200, output_tokens: 300, cached_input_tokens: 0 }, unit_prices: { input_tokens: 2_000_000, output_tokens: 8_000_000, cached_input_tokens: 500_000 }, amount: 2_600 }] }, english, 'en-GB'),
    ).to.equal('1,200 input tokens × ¥2.00/M + 300 output tokens × ¥8.00/M');
    expect(pricingText({ amount: 400_000, lines: [{ per: 1, units: { images: 2 }, unit_prices: { images: 200_000 }, amount: 400_000 }] }, english, 'en-GB')).to.equal('2 images × ¥0.20');
    expect(
      pricingText(
        {
          amount: 10_050,
          lines: [
            { per: 3_600_000, units: { duration_ms: 90_000 }, unit_prices: { duration_ms: 400_000 }, amount: 10_000 },
            { per: 1, units: { web_search_calls: 1 }, unit_prices: { web_search_calls: 50 }, amount: 50 },
          ],
        },
        english,
        'en-GB',
      ),
    ).to.equal('90,000 milliseconds of audio × ¥0.40/h + 1 web_search calls × ¥0.00005');
    expect(pricingText({ amount: 0, lines: [] }, english, 'en-GB')).to.equal('—');
  });

  it('writes summed units for usage', () => {
    expect(unitsText({ input_tokens: 1_200, output_tokens: 300 }, english, 'en-GB')).to.equal('1,200 input tokens · 300 output tokens');
    expect(unitsText({}, english, 'en-GB')).to.equal('—');
  });
});
