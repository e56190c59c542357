import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { SettlementJournal } from '../../src/billing/settlement-journal';
import type { Pricing } from '../../src/billing/money';
import type { ClosedOutcome } from '../../src/domain/account/decider';
import { DomainError } from '../../src/domain/decider';
import { createLogger } from '../../src/log';
import { testTempDir } from '../support/temp-dirs';

const PRICING: Pricing = { amount: 56, lines: [{ units: { input_tokens: 8, output_tokens: 12 }, unit_prices: { input_tokens: 1_000_000, output_tokens: 4_000_000 }, per: 1_000_000, amount: 56 }] };
const reservation = (n: number) => `rsv_${String(n).padStart(28, '0')}`;
const entry = (n: number) => ({ accountId: 'acct_1', reservationId: reservation(n), pricing: PRICING, usage: { completion_tokens: 12 }, requestId: `req_${n}` });

/** The database as the journal sees it: down (connections refused), up, or refusing one reservation. */
class FakeLedger {
  down = true;
  readonly settled: string[] = [];
  outcomes = new Map<string, ClosedOutcome | DomainError>();

  async settle(_account: string, reservationId: string): Promise<ClosedOutcome> {
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' });
    const outcome = this.outcomes.get(reservationId);
    if (outcome instanceof DomainError) throw outcome;
    this.settled.push(reservationId);
    return outcome ?? { kind: 'settled', amount: PRICING.amount, reservedAmount: 100, refunded: 0 };
  }
}

describe('settlement journal', () => {
  const logger = createLogger('silent');
  const clock = () => new Date('2026-12-05T12:00:00Z');
  let dir: string;
  beforeEach(() => {
    dir = path.join(testTempDir('settlement-journal-'), 'journal');
  });
  const journal = (ledger: FakeLedger) => new SettlementJournal(dir, ledger, logger, { retryMs: 3_600_000, clock });
  const files = (sub = '') => (fs.existsSync(path.join(dir, sub)) ? fs.readdirSync(path.join(dir, sub)).filter((f) => f.endsWith('.json')).sort() : []);

  it('settles at once while the database answers, writing nothing', async () => {
    const ledger = new FakeLedger();
    ledger.down = false;
    expect(await journal(ledger).settle(entry(1))).to.equal('settled');
    expect(ledger.settled).to.deep.equal([reservation(1)]);
    expect(files()).to.deep.equal([]);
  });

  it('keeps a settlement the database cannot take on disk, and settles it once the database is back', async () => {
    const ledger = new FakeLedger();
    const j = journal(ledger);
    expect(await j.settle(entry(1))).to.equal('journaled');
    expect(files()).to.deep.equal([`${reservation(1)}.json`]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, `${reservation(1)}.json`), 'utf8'))).to.deep.equal({ ...entry(1), journaledAt: '2026-12-05T12:00:00.000Z' });
    expect(await j.flush(), 'still down').to.equal(0);
    expect(j.size).to.equal(1);
    ledger.down = false;
    expect(await j.flush()).to.equal(1);
    expect(ledger.settled).to.deep.equal([reservation(1)]);
    expect(files()).to.deep.equal([]);
    expect(await j.flush(), 'settled once').to.equal(0);
    await j.stop();
  });

  it('settles at start what an earlier process on the same directory kept, and removes a write it left half done', async () => {
    const down = new FakeLedger();
    const first = journal(down);
    await first.settle(entry(1));
    await first.settle(entry(2));
    await first.stop();
    // A write the crash cut short, a while ago.
    const cut = path.join(dir, `${reservation(3)}.json.999.tmp`);
    fs.writeFileSync(cut, '{"accountId":');
    const longAgo = new Date(Date.now() - 120_000);
    fs.utimesSync(cut, longAgo, longAgo);
    const up = new FakeLedger();
    up.down = false;
    const next = journal(up);
    await next.start();
    expect(up.settled.sort()).to.deep.equal([reservation(1), reservation(2)]);
    expect(fs.readdirSync(dir).filter((f) => f !== 'unbilled')).to.deep.equal([]);
    await next.stop();
  });

  it('moves aside, and never retries, a settlement whose reservation was released first or that the ledger refuses', async () => {
    const ledger = new FakeLedger();
    const j = journal(ledger);
    await j.settle(entry(1));
    await j.settle(entry(2));
    await j.settle(entry(3));
    ledger.down = false;
    ledger.outcomes.set(reservation(1), { kind: 'released', amount: 100, reason: 'expired: the request never settled' });
    ledger.outcomes.set(reservation(2), new DomainError('account_not_found', 'no such account'));
    expect(await j.flush()).to.equal(1);
    expect(files()).to.deep.equal([]);
    expect(files('unbilled')).to.deep.equal([`${reservation(1)}.json`, `${reservation(2)}.json`]);
    expect(j.size).to.equal(0);
    await j.stop();
  });

  it('throws, keeping nothing, an error that is not the database being away', async () => {
    const ledger = new FakeLedger();
    ledger.down = false;
    ledger.outcomes.set(reservation(1), new DomainError('reservation_not_found', 'no such reservation'));
    let thrown: unknown;
    await journal(ledger).settle(entry(1)).catch((err: unknown) => (thrown = err));
    expect(thrown).to.be.instanceOf(DomainError);
    expect(files()).to.deep.equal([]);
  });
});

describe('settlement journal on a data directory shared by several processes', () => {
  const logger = createLogger('silent');
  const clock = () => new Date('2026-12-05T12:00:00Z');

  it('settles what another process kept, spares a write another process may still be making, and lets one bad entry hold back no other', async () => {
    const dir = path.join(testTempDir('settlement-journal-shared-'), 'journal');
    const down = new FakeLedger();
    const other = new SettlementJournal(dir, down, logger, { retryMs: 3_600_000, clock });
    await other.settle(entry(1));
    await other.settle(entry(2));
    await other.stop();
    // Another process is writing this one right now.
    const fresh = path.join(dir, `${reservation(3)}.json.4242.tmp`);
    fs.writeFileSync(fresh, '{"accountId":');
    fs.writeFileSync(path.join(dir, `${reservation(4)}.json`), 'not json');

    const ledger = new FakeLedger();
    ledger.down = false;
    const here = new SettlementJournal(dir, ledger, logger, { retryMs: 3_600_000, clock });
    expect(await here.flush(), 'the first pass scans the directory').to.equal(2);
    expect(ledger.settled.sort()).to.deep.equal([reservation(1), reservation(2)]);
    expect(fs.existsSync(fresh), 'a write in progress is left alone').to.equal(true);
    expect(here.size, 'the unreadable entry is still kept, to be looked at').to.equal(1);
    await here.stop();
  });
});
