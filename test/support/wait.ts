import { expect } from 'chai';
import type { TestGateway } from './gateway';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * How long a wait for an event may take by default. A safety net, not a measure: a machine whose
 * cores are busy elsewhere (or a shared PostgreSQL server whose oldest open transaction holds the
 * log readers back) may take many seconds for what takes milliseconds alone.
 */
export const WAIT_LIMIT_MS = 45_000;

/** Calls `probe` every `everyMs` until it answers something truthy, which it returns; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = WAIT_LIMIT_MS, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/**
 * Reads a task every `everyMs` (above the suite's polling limit) until its status is final,
 * expecting every read to answer 200 and pass `check`. Returns the final body and the statuses in
 * the order they were seen.
 */
export async function pollUntilFinal(
  what: string,
  read: () => Promise<{ status: number; body: any }>,
  options: { check: (body: any) => void; isFinal: (status: string) => boolean; everyMs: number },
): Promise<{ final: any; seen: string[] }> {
  const seen: string[] = [];
  const final = await waitFor(
    what,
    async () => {
      const res = await read();
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      options.check(res.body);
      if (seen[seen.length - 1] !== res.body.status) seen.push(res.body.status);
      return options.isFinal(res.body.status) ? res.body : null;
    },
    WAIT_LIMIT_MS,
    options.everyMs,
  );
  return { final, seen };
}

/** Waits until nothing is frozen on the accounts of these keys: every reservation settled or released. */
async function reservationsClosed(gw: TestGateway, keys: readonly string[], timeoutMs?: number): Promise<void> {
  for (const key of keys) await waitFor('every reservation closed', async () => (await gw.balance(key)).frozen === 0, timeoutMs);
}

/** After a test: every reservation of these keys closed, then the audit clean (ledger invariants, replay). */
export async function expectSettledAndAuditClean(gw: TestGateway, keys: readonly string[], timeoutMs?: number): Promise<void> {
  await reservationsClosed(gw, keys, timeoutMs);
  await gw.expectAuditClean();
}
