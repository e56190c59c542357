import type { Pool, PoolClient, QueryResultRow } from 'pg';
import type { Logger } from '../log';

/**
 * Session advisory locks held on one dedicated connection: whichever gateway process holds the
 * lock of a consumer is its active instance. If the connection dies, PostgreSQL releases every
 * lock at once and this process stops its consumers until it wins them again. Correctness does
 * not depend on the lease (the runner checks its checkpoint under a row lock in every batch); the
 * lease only keeps the other instances from doing the same work twice.
 *
 * A connection can also die without a word: a network partition loses every packet, the server
 * gives the session up (and its locks to another process) by its own keep-alive, and nothing ever
 * reaches this side, which would believe itself the holder forever. So the connection is asked
 * to answer every `retryMs` while it holds a lease; one that does not answer within
 * `answerWithinMs` is dropped and its leases counted lost (the multi-host test found this).
 */
export class LeaseHolder {
  private client: Promise<PoolClient> | null = null;
  private readonly held = new Set<string>();
  private readonly wanted = new Map<string, (held: boolean) => void>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
    private readonly retryMs = 2000,
    private readonly answerWithinMs = 10_000,
  ) {}

  /** Calls onChange(true) when this process wins the lease and onChange(false) if it loses it. */
  want(name: string, onChange: (held: boolean) => void): void {
    this.wanted.set(name, onChange);
    void this.tryAcquire();
  }

  /** The one lease connection; concurrent callers share the same connect. */
  private connection(): Promise<PoolClient> {
    this.client ??= this.pool.connect().then(
      (client) => {
        client.on('error', (err) => this.lose(client, err));
        return client;
      },
      (err: unknown) => {
        this.client = null;
        throw err;
      },
    );
    return this.client;
  }

  private readonly lost = new WeakSet<PoolClient>();

  /** The lease connection died (or stopped answering): every lease it held is gone. */
  private lose(client: PoolClient, err: unknown): void {
    // After close() the connection was already handed back; its end is expected then.
    if (this.lost.has(client) || this.closed) return;
    this.lost.add(client);
    this.logger.warn({ err }, 'lease connection lost');
    this.failure = `lease connection lost: ${(err as Error).message}`;
    this.client = null;
    // Destroys the socket, so a query still waiting on it fails now rather than after the partition.
    client.release(true);
    for (const name of this.held) this.wanted.get(name)?.(false);
    this.held.clear();
    // Win them back once the database answers again (the pass retries until then).
    void this.tryAcquire();
  }

  /** Runs `sql` on the lease connection; a connection silent for answerWithinMs is lost. */
  private async query<R extends QueryResultRow>(client: PoolClient, sql: string, values?: unknown[]): Promise<R[]> {
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the lease connection did not answer within ${this.answerWithinMs} ms`)), this.answerWithinMs);
    });
    try {
      return (await Promise.race([client.query<R>(sql, values), silent])).rows;
    } catch (err) {
      this.lose(client, err);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private acquiring: Promise<void> | null = null;

  /** One acquisition pass at a time: the lease connection runs one query at a time anyway. */
  private tryAcquire(): Promise<void> {
    this.acquiring ??= this.acquirePass().finally(() => {
      this.acquiring = null;
    });
    return this.acquiring;
  }

  private async acquirePass(): Promise<void> {
    if (this.closed) return;
    try {
      const client = await this.connection();
      // One statement for all the leases wanted and not held (a gateway wants a dozen at start),
      // so that their consumers start together and share their first queries; again for any
      // wanted meanwhile.
      const tried = new Set<string>();
      // Every lease held already: only the proof that the session, and with it each lock, lives.
      if (this.held.size > 0 && this.held.size === this.wanted.size) await this.query(client, 'SELECT 1');
      for (;;) {
        const names = [...this.wanted.keys()].filter((name) => !this.held.has(name) && !tried.has(name));
        if (names.length === 0) break;
        for (const name of names) tried.add(name);
        const rows = await this.query<{ name: string; ok: boolean }>(
          client,
          "SELECT name, pg_try_advisory_lock(hashtextextended('consumer:' || name, 0)) AS ok FROM unnest($1::text[]) AS name",
          [names],
        );
        for (const { name, ok } of rows) {
          if (!ok || this.closed) continue;
          this.held.add(name);
          this.wanted.get(name)?.(true);
        }
      }
      this.recovered();
    } catch (err) {
      if (!this.closed) this.failed(err);
    }
    if (!this.closed && this.wanted.size > 0 && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.tryAcquire();
      }, this.retryMs);
      this.timer.unref();
    }
  }

  /** Null while the lease connection works; otherwise why the consumers of this process cannot run. */
  get problem(): string | null {
    if (this.closed) return 'stopped';
    return this.failure;
  }

  private failure: string | null = null;

  /** One warning per outage, however many passes fail while the database is away. */
  private failed(err: unknown): void {
    if (this.failure === null) this.logger.warn({ err }, 'lease acquisition failing; retrying until the database answers');
    this.failure = `lease connection: ${(err as Error).message ?? String(err)}`;
  }

  private recovered(): void {
    if (this.failure === null) return;
    this.failure = null;
    this.logger.info('lease acquisition works again');
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.acquiring;
    const client = await this.client?.catch(() => null);
    this.client = null;
    this.held.clear();
    // Releasing the connection without reuse ends the session and with it every advisory lock.
    client?.release(true);
  }
}
