import fs from 'node:fs/promises';
import path from 'node:path';
import type { AccountService } from '../accounts/service';
import { isDatabaseUnavailable } from '../db/unavailable';
import { DomainError } from '../domain/decider';
import type { Logger } from '../log';
import type { ChargeChannels } from '../domain/account/events';
import type { Pricing } from './money';

/** A settlement the database could not take when it was due, kept on disk until it does. */
export interface JournaledSettlement {
  readonly accountId: string;
  readonly reservationId: string;
  readonly pricing: Pricing;
  readonly usage: Record<string, unknown>;
  readonly requestId: string;
  /** The upstream channels that served (Router), recorded on the settlement; `channel` alone on entries journaled before `channels` was kept. */
  readonly served?: ChargeChannels;
  /** The channel that served, on entries journaled before `served` was kept. */
  readonly channel?: string;
  readonly journaledAt: string;
}

export type SettleOutcome = 'settled' | 'journaled';

/** One settlement, now or from the journal, as the ledger takes it. */
function settleEntry(accounts: Pick<AccountService, 'settle'>, entry: Omit<JournaledSettlement, 'journaledAt'>): ReturnType<AccountService['settle']> {
  const served = entry.served ?? (entry.channel === undefined ? {} : { channel: entry.channel });
  return accounts.settle(entry.accountId, entry.reservationId, entry.pricing, entry.usage, { requestId: entry.requestId }, served);
}

/** How often an idle process looks for settlements other processes on its data directory left. */
const IDLE_SCAN_MS = 30_000;
/** A temporary file older than this is a write a crash cut short (a write takes milliseconds). */
const STALE_WRITE_MS = 60_000;

/** Reservation ids are `rsv_` and hex (src/ids.ts); anything else never names a file here. */
const FILE_NAME = /^rsv_[0-9a-f]{28}\.json$/;

/**
 * Settlements whose usage is known but that the database could not take (it went away after the
 * call was delivered). Each is written to its own file under `<DATA_DIR>/settlement-journal`,
 * fsynced before the request goes on, and settled from there: by this process every `retryMs`
 * while any is kept, by the next start on the same data directory (`start`), and by any other
 * process sharing that directory within IDLE_SCAN_MS. A settle is
 * idempotent by reservation id (a repeated close answers the first outcome), so an entry whose
 * settlement did commit although its answer was lost is settled once.
 *
 * Processes on other data directories never see it: they learn of a kept settlement by the rule
 * that the reconciler releases a request's reservation only `SETTLEMENT_JOURNAL_HORIZON_MS` after
 * it expired, which is as long as an entry waits for its process to come back. An entry whose
 * reservation was released all the same (its process stayed down past that) is moved to
 * `unbilled/` and logged as an error: the usage it records was delivered and never charged.
 */
export class SettlementJournal {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private timerDue = 0;
  private flushing: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly dir: string,
    private readonly accounts: Pick<AccountService, 'settle'>,
    private readonly logger: Logger,
    private readonly options: { readonly retryMs: number; readonly clock: () => Date },
  ) {}

  /** Settles now; when the database cannot be reached, keeps the settlement on disk and settles it later. */
  async settle(entry: Omit<JournaledSettlement, 'journaledAt'>): Promise<SettleOutcome> {
    try {
      await settleEntry(this.accounts, entry);
      return 'settled';
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      try {
        await this.keep({ ...entry, journaledAt: this.options.clock().toISOString() });
      } catch (writeErr) {
        this.logger.error({ err: writeErr, reservationId: entry.reservationId }, 'could not journal a settlement the database could not take');
        throw err;
      }
      this.logger.warn({ err, reservationId: entry.reservationId, accountId: entry.accountId }, 'database unreachable: settlement journaled, to be settled when it is back');
      this.schedule();
      return 'journaled';
    }
  }

  /** Settlements kept and not settled yet. */
  get size(): number {
    return this.pending.size;
  }

  /** Takes up what an earlier process on this data directory left, and settles it. */
  async start(): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    await this.scan();
    if (this.pending.size > 0) this.logger.warn({ settlements: this.pending.size }, 'settling the settlements an earlier run journaled');
    await this.flush().catch((err: unknown) => this.logger.error({ err }, 'settling the journal failed; retrying'));
    this.schedule();
  }

  /** One pass over the kept settlements; resolves how many were settled. A pass already running is joined. */
  flush(): Promise<number> {
    this.flushing ??= this.pass().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing?.catch(() => undefined);
  }

  /**
   * The next pass: in `retryMs` while settlements are kept, else in IDLE_SCAN_MS, which is how soon
   * this process takes up what another process sharing the data directory left when it died.
   */
  private schedule(): void {
    if (this.stopped) return;
    const due = Date.now() + (this.pending.size > 0 ? this.options.retryMs : Math.max(this.options.retryMs, IDLE_SCAN_MS));
    if (this.timer && this.timerDue <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush()
        .catch((err: unknown) => this.logger.error({ err }, 'settling the journal failed; retrying'))
        .finally(() => this.schedule());
    }, due - Date.now());
    this.timer.unref();
  }

  /** Adds the directory's settlements to those kept (other processes may share it); removes writes a crash cut short. */
  private async scan(): Promise<void> {
    const now = Date.now();
    for (const name of await fs.readdir(this.dir).catch(() => [] as string[])) {
      if (FILE_NAME.test(name)) this.pending.add(name.slice(0, -'.json'.length));
      else if (name.endsWith('.tmp')) {
        // Another live process may be writing this one: only a write older than any can take is dead.
        const file = path.join(this.dir, name);
        const stat = await fs.stat(file).catch(() => null);
        if (stat && now - stat.mtimeMs > STALE_WRITE_MS) await fs.rm(file, { force: true });
      }
    }
  }

  private async pass(): Promise<number> {
    await this.scan();
    let settled = 0;
    for (const reservationId of [...this.pending]) {
      try {
        if ((await this.settleKept(reservationId)) === 'settled') settled++;
      } catch (err) {
        // Still out of reach: the rest would fail alike; the next pass tries again.
        if (isDatabaseUnavailable(err)) return settled;
        // One entry's trouble (a view behind, a file that cannot be read) holds back no other.
        this.logger.error({ err, reservationId }, 'could not settle a journaled settlement; retrying');
      }
    }
    return settled;
  }

  /** Settles one kept settlement and forgets it, or moves it aside when it can no longer be charged. */
  private async settleKept(reservationId: string): Promise<'settled' | 'unbilled' | 'gone'> {
    const file = this.fileOf(reservationId);
    const entry = await readEntry(file);
    // Settled by another process sharing this data directory.
    if (!entry) {
      this.pending.delete(reservationId);
      return 'gone';
    }
    let refused: string | null;
    try {
      const outcome = await settleEntry(this.accounts, entry);
      refused = outcome.kind === 'released' ? `the reservation was released first (${outcome.reason})` : null;
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      refused = `the ledger refused it: ${err.code}`;
    }
    if (refused) {
      await this.unbilled(entry, refused);
      return 'unbilled';
    }
    await fs.rm(file, { force: true });
    this.pending.delete(reservationId);
    return 'settled';
  }

  /** Moves a settlement that can no longer be charged aside, for finance to see. */
  private async unbilled(entry: JournaledSettlement, reason: string): Promise<void> {
    this.logger.error({ reservationId: entry.reservationId, accountId: entry.accountId, amount: entry.pricing.amount, reason }, 'a journaled settlement could not be charged; kept under unbilled/');
    const unbilled = path.join(this.dir, 'unbilled');
    await fs.mkdir(unbilled, { recursive: true });
    await fs.rename(this.fileOf(entry.reservationId), path.join(unbilled, `${entry.reservationId}.json`));
    this.pending.delete(entry.reservationId);
  }

  private fileOf(reservationId: string): string {
    return path.join(this.dir, `${reservationId}.json`);
  }

  /** Written whole or not at all, and durable before the request goes on. */
  private async keep(entry: JournaledSettlement): Promise<void> {
    const name = `${entry.reservationId}.json`;
    if (!FILE_NAME.test(name)) throw new Error(`not a reservation id: ${entry.reservationId}`);
    await fs.mkdir(this.dir, { recursive: true });
    const tmp = path.join(this.dir, `${name}.${process.pid}.tmp`);
    const handle = await fs.open(tmp, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(entry));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(tmp, this.fileOf(entry.reservationId));
    const dir = await fs.open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    this.pending.add(entry.reservationId);
  }
}

async function readEntry(file: string): Promise<JournaledSettlement | null> {
  try {
    return JSON.parse(await fs.readFile(file, 'utf8')) as JournaledSettlement;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
