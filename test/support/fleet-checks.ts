import { expect } from 'chai';
import type { Pool } from 'pg';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { callJson, type GatewayProcess } from './gateway-process';
import { waitFor } from './wait';

/**
 * What the tests of several gateway processes on one database check (test/integration/scale-out,
 * on one machine, and fleet-hosts, across network namespaces): the settings that make a dead or
 * cut-off process's work move quickly, consumers run once, tasks billed once, the audit clean.
 */

/** The settings of every gateway in a fleet test, beside its database, channels, data directory and admin token. */
export const FLEET_SETTINGS = {
  URL_SIGNING_SECRET: 'fleet-signing-secret',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_DELAYS_MS: '200,400,800',
  WEBHOOK_TIMEOUT_MS: '1000',
  // Work leased by a process that died or was cut off is taken over once its lease runs out.
  JOB_LEASE_MS: '3000',
  TASK_POLL_MS: '50',
  SUBSCRIPTION_POLL_MS: '200',
  RECONCILE_INTERVAL_MS: '500',
  // No settlement waits in a journal for the database to come back: an expired reservation is released at once.
  SETTLEMENT_JOURNAL_HORIZON_MS: '0',
} as const;

/**
 * An account with ample credit, an API key and a webhook secret, each step through another of the
 * three gateways: any process serves the admin API, and a key made in one works in the others
 * once the shared keys view holds it.
 */
export async function fundedAccountAcross(gateways: readonly GatewayProcess[], adminToken: string, name: string): Promise<{ accountId: string; key: string; secret: string }> {
  const [first, second, third] = gateways as [GatewayProcess, GatewayProcess, GatewayProcess];
  const opened = await callJson(`${second.url}/admin/v1/accounts`, adminToken, 'POST', { name });
  expect(opened.status, JSON.stringify(opened.body)).to.equal(201);
  const accountId = opened.body.id as string;
  const credited = await callJson(`${third.url}/admin/v1/accounts/${accountId}/credits`, adminToken, 'POST', { amount: 1_000_000_000, reference: `${name}-funding` });
  expect(credited.status, JSON.stringify(credited.body)).to.equal(201);
  const issued = await callJson(`${first.url}/admin/v1/accounts/${accountId}/keys`, adminToken, 'POST', {});
  expect(issued.status, JSON.stringify(issued.body)).to.equal(201);
  const key = issued.body.key as string;
  // The issuing gateway answers once the shared keys view holds the key, or after PROJECTION_WAIT_MS
  // (a loaded machine): the other gateways know the key from that view.
  // Asked through the admin API: polling with the key itself would count its refusals towards the address's lockout.
  await waitFor('the keys view to hold the key', async () => (await callJson(`${second.url}/admin/v1/accounts/${accountId}/keys`, adminToken)).body.data.some((k: { id: string }) => k.id === issued.body.id));
  const rotated = await callJson(`${second.url}/v1/account/webhook-secret`, key, 'POST');
  expect(rotated.status, JSON.stringify(rotated.body)).to.equal(201);
  return { accountId, key, secret: rotated.body.secret as string };
}

/** True once every consumer any of `live` knows runs in exactly one of them. */
export async function everyConsumerRunOnce(live: readonly GatewayProcess[], adminToken: string): Promise<boolean> {
  const statuses = await Promise.all(live.map((g) => callJson(`${g.url}/admin/v1/consumers`, adminToken)));
  const names = new Set<string>(statuses.flatMap((s) => s.body.consumers.map((c: { name: string }) => c.name)));
  return [...names].every((name) => statuses.filter((s) => s.body.consumers.some((c: { name: string; active_here: boolean }) => c.name === name && c.active_here)).length === 1);
}

/**
 * Asks the live gateways, round after round, which consumers each runs, and records a consumer that
 * two run at once. A round asks them one after another, so a round that a kill, a cut or a restore
 * interrupts would join answers from before and after it: pause() around such a change drops it.
 */
export class ConsumerSampler {
  readonly doubleRuns: string[] = [];
  private running = true;
  private paused = false;
  private changes = 0;
  private readonly loop: Promise<void>;

  constructor(
    private readonly live: () => readonly GatewayProcess[],
    private readonly adminToken: string,
  ) {
    this.loop = this.run();
  }

  pause(): void {
    this.paused = true;
    this.changes++;
  }

  resume(): void {
    this.paused = false;
  }

  /** Ends the sampling; resolves once the last round is done. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      if (!this.paused) {
        const changesBefore = this.changes;
        const owners = new Map<string, string[]>();
        for (const gateway of this.live()) {
          // A bound on each question: a gateway cut off between the list and the question answers nothing.
          const status = await callJson(`${gateway.url}/admin/v1/consumers`, this.adminToken, 'GET', undefined, AbortSignal.timeout(5000)).catch(() => null);
          for (const consumer of status?.body?.consumers ?? []) if (consumer.active_here) owners.set(consumer.name, [...(owners.get(consumer.name) ?? []), gateway.name]);
        }
        if (this.changes === changesBefore) for (const [name, holders] of owners) if (holders.length > 1) this.doubleRuns.push(`${name}: ${holders.join(', ')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/** Each task stream of `prefix` (`video-`) finished once and was billed once, and there are `count` of them. */
export async function expectEachTaskFinishedAndBilledOnce(pool: Pool, prefix: string, count: number): Promise<void> {
  const { rows } = await pool.query<{ stream_id: string; finished: string; billed: string }>(
    `SELECT stream_id, count(*) FILTER (WHERE type IN ('TaskSucceeded', 'TaskFailed', 'TaskCancelled'))::text AS finished,
            count(*) FILTER (WHERE type = 'TaskBilled')::text AS billed
       FROM es_events WHERE stream_id LIKE $1 GROUP BY stream_id`,
    [`${prefix}%`],
  );
  expect(rows).to.have.length(count);
  for (const row of rows) expect([row.stream_id, row.finished, row.billed]).to.deep.equal([row.stream_id, '1', '1']);
}

/**
 * Nothing frozen on the key's account and every read model caught up (read through `reader`), then
 * the audit: the ledger invariants and every read model against a replay of the log.
 */
export async function expectNothingFrozenAndAuditClean(pool: Pool, reader: GatewayProcess, key: string, adminToken: string, timeoutMs: number): Promise<void> {
  await waitFor('nothing frozen', async () => (await callJson(`${reader.url}/v1/account`, key)).body.balance.frozen === 0, timeoutMs, 200);
  await waitFor('read models caught up', async () => (await callJson(`${reader.url}/admin/v1/consumers`, adminToken)).body.consumers.every((c: { behind: number }) => c.behind === 0), timeoutMs, 100);
  const store = new PostgresEventStore({ pool });
  try {
    const report = await runAudit(pool, store, allProjections, { staleAfterMs: 3_600_000 });
    expect(report.invariantViolations, 'ledger invariants').to.deep.equal([]);
    expect(report.mismatches, 'read models against a replay of the log').to.deep.equal([]);
  } finally {
    await store.close();
  }
}
