import { expect } from 'chai';
import { allProjections } from '../../projections';
import { runAudit } from '../../src/audit/audit';
import type { ProgressSink } from '../../src/cli/progress';
import { READ_MODEL_SCHEMA } from '../../src/projections-runtime/consumer';
import { rebuildProjections } from '../../src/projections-runtime/rebuild';
import { readCheckpoint } from '../../src/projections-runtime/runner';
import { comparePositions } from '../../src/eventstore/port';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';

/** A sink that keeps the total and sums what was advanced. */
function recorder(): ProgressSink & { totals: (number | null)[]; done: number } {
  return {
    totals: [],
    done: 0,
    setTotal(total) {
      this.totals.push(total);
    },
    advance(events) {
      this.done += events;
    },
  };
}

describe('progress of the audit and the rebuild over the log @integration', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway();
    for (let i = 0; i < 3; i++) await gw.fundedAccount(1_000 + i);
    // Every read model has folded the whole log: each replays all of it.
    const head = (await gw.store.headPosition())!;
    await waitFor('read models at the head', async () => {
      for (const p of allProjections) {
        const at = await readCheckpoint(gw.pool, p.name);
        if (!at || comparePositions(at, head) < 0) return false;
      }
      return true;
    });
  });
  after(async () => gw.close());

  it('counts the log, announces the total work and advances through all of it', async () => {
    const inLog = await gw.store.countEvents!((await gw.store.headPosition())!);
    expect(inLog).to.be.greaterThan(0);

    const audit = recorder();
    const report = await runAudit(gw.pool, gw.store, allProjections, { staleAfterMs: 3_600_000, progress: audit });
    expect(report.eventsInLog).to.equal(inLog);
    expect(audit.totals).to.deep.equal([inLog * (1 + allProjections.length)]);
    expect(audit.done).to.equal(inLog * (1 + allProjections.length));

    const rebuild = recorder();
    await rebuildProjections(gw.pool, gw.store, allProjections, READ_MODEL_SCHEMA, gw.logger, rebuild);
    expect(rebuild.totals).to.deep.equal([inLog * allProjections.length]);
    expect(rebuild.done).to.be.at.most(inLog * allProjections.length);
    await gw.expectAuditClean();
  });
});
