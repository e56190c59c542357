import fs from 'node:fs/promises';
import path from 'node:path';
import type { AccountService } from '../accounts/service';
import { isDatabaseUnavailable } from '../db/unavailable';
import { DomainError } from '../domain/decider';
import type { Logger } from '../log';
import type { Pricing } from './money';

/** A settlement the database could not take when it was due, kept on disk until it does. */
export interface JournaledSettlement {
  readonly accountId: string;
  readonly reservationId: string;
  readonly pricing: Pricing;
  readonly usage: Record<string, unknown>;
  readonly requestId: string;
  readonly journaledAt: string;
}

export type SettleOutcome = 'settled' | 'journaled';

/** Reservation ids are `rsv_` and hex (src/ids.ts); anything else never names a file here. */
const FILE_NAME = /^rsv_[0-9a-f]{28}\.json$/;

/**
 * Settlements whose usage is known but that the database could not take (it went away after the
 * call was delivered). Each is written to its own file under `<DATA_DIR>/settlement-journal`,
 * fsynced before the request goes on, and settled from there: by this process every `retryMs`
 * while any is kept, and by the next start on the same data directory (`start`). A settle is
 * idempotent by reservation id (a repeated close answers the first outcome), so an entry whose
 * settlement did commit although its answer was lost is settled once.
 *
 * Other processes do not read this directory: they learn of a kept settlement by the rule that
 * the reconciler releases a request's reservation only `SETTLEMENT_JOURNAL_HORIZON_MS` after it
 * expired, which is as long as an entry waits for its process to come back. An entry whose
 * reservation was released all the same (its process stayed down past that) is moved to
 * `unbilled/` and logged as an error: the usage it records was delivered and never charged.
 */
export class SettlementJournal {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
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
      await this.accounts.settle(entry.accountId, entry.reservationId, entry.pricing, entry.usage, { requestId: entry.requestId });
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
    for (const name of await fs.readdir(this.dir)) {
      if (FILE_NAME.test(name)) this.pending.add(name.slice(0, -'.json'.length));
      // A write cut by a crash left its temporary file; its request never went on.
      else if (name.endsWith('.tmp')) await fs.rm(path.join(this.dir, name), { force: true });
    }
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

  private schedule(): void {
    if (this.stopped || this.timer || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush()
        .catch((err: unknown) => this.logger.error({ err }, 'settling the journal failed; retrying'))
        .finally(() => this.schedule());
    }, this.options.retryMs);
    this.timer.unref();
  }

  private async pass(): Promise<number> {
    let settled = 0;
    for (const reservationId of [...this.pending]) {
      const file = this.fileOf(reservationId);
      const entry = await readEntry(file);
      // Settled by another process on this data directory (processes sharing one through DATABASE_URL).
      if (!entry) {
        this.pending.delete(reservationId);
        continue;
      }
      let refused: string | null;
      try {
        const outcome = await this.accounts.settle(entry.accountId, entry.reservationId, entry.pricing, entry.usage, { requestId: entry.requestId });
        refused = outcome.kind === 'released' ? `the reservation was released first (${outcome.reason})` : null;
      } catch (err) {
        // Still out of reach: the rest would fail alike; the next pass tries again.
        if (isDatabaseUnavailable(err)) return settled;
        if (!(err instanceof DomainError)) throw err;
        refused = `the ledger refused it: ${err.code}`;
      }
      if (refused) {
        await this.unbilled(entry, refused);
        continue;
      }
      await fs.rm(file, { force: true });
      this.pending.delete(reservationId);
      settled++;
    }
    return settled;
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
