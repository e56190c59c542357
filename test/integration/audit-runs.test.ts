import { expect } from 'chai';
import type { Pool, PoolClient } from 'pg';
import { allProjections } from '../../projections';
import { AUDIT_LOCK_KEY, AuditRuns } from '../../src/audit-runs/service';
import { createPool } from '../../src/db/database';
import { startTestGateway, type TestGateway } from '../support/gateway';
import { waitFor } from '../support/wait';

/** POST /admin/v1/audit runs the audit of `npm run audit` in the gateway; GET /admin/v1/audit shows it and the last result. */
describe('audit runs from the admin API @integration', () => {
  let gw: TestGateway;
  let key: string;
  let accountId: string;

  before(async () => {
    gw = await startTestGateway({ RATE_LIMIT_PER_MINUTE: '100000' });
    ({ key, accountId } = await gw.fundedAccount(100_000_000));
    const chat = await gw.api(key, 'POST', '/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'hi [sim:tokens=3]' }] });
    expect(chat.status).to.equal(200);
    await waitFor('the charge settled', async () => (await gw.balance(key)).frozen === 0);
  });
  after(async () => gw.close());

  const status = async () => {
    const res = await gw.admin('GET', '/admin/v1/audit');
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body;
  };
  /** Starts a run and waits until it is the last finished one. */
  async function runToEnd(): Promise<any> {
    const started = await gw.admin('POST', '/admin/v1/audit');
    expect(started.status, JSON.stringify(started.body)).to.equal(202);
    expect(started.body).to.include({ object: 'audit.run', status: 'running', finished_at: null, duration_ms: null, report: null, error: null });
    return waitFor('the audit finished', async () => {
      const body = await status();
      return body.last?.id === started.body.id ? body.last : null;
    }, 60_000, 100);
  }

  it('shows nothing before the first run, then a passing run with the report of npm run audit', async () => {
    expect(await status()).to.deep.equal({ object: 'audit', running: null, last: null });
    const run = await runToEnd();
    expect(run.status).to.equal('passed');
    expect(run.error).to.equal(null);
    expect(Date.parse(run.finished_at)).to.be.at.least(Date.parse(run.started_at));
    expect(run.duration_ms).to.equal(Date.parse(run.finished_at) - Date.parse(run.started_at));
    expect(run.report).to.include({ ok: true });
    expect(run.report.eventsInLog).to.be.above(0);
    expect(run.report.mismatches).to.deep.equal([]);
    expect(run.report.invariantViolations).to.deep.equal([]);
    expect((await status()).running).to.equal(null);
  });

  it('reports a read model that differs from the log as a failed run naming it', async () => {
    const { rows } = await gw.pool.query<{ available: string }>('SELECT available FROM rm.balances WHERE account_id = $1', [accountId]);
    const available = rows[0]!.available;
    await gw.pool.query('UPDATE rm.balances SET available = available + 1 WHERE account_id = $1', [accountId]);
    try {
      const run = await runToEnd();
      expect(run.status).to.equal('failed');
      expect(run.report.ok).to.equal(false);
      // The live row differs from its replay; the log itself (the invariants) is sound.
      expect(run.report.mismatches).to.deep.equal(['balances: 2 row(s) of balances differ from a replay of the log']);
      expect(run.report.invariantViolations).to.deep.equal([]);
    } finally {
      await gw.pool.query('UPDATE rm.balances SET available = $2 WHERE account_id = $1', [accountId, available]);
    }
    expect((await runToEnd()).status).to.equal('passed');
  });

  it('runs one audit at a time across processes: 409 while another holds the audit, and closes a dead process’s run as abandoned', async () => {
    const other: PoolClient = await gw.pool.connect();
    try {
      await other.query('SELECT pg_advisory_lock($1)', [AUDIT_LOCK_KEY]);
      const refused = await gw.admin('POST', '/admin/v1/audit');
      expect(refused.status).to.equal(409);
      expect(refused.body.error).to.include({ code: 'audit_running', type: 'conflict_error' });
    } finally {
      await other.query('SELECT pg_advisory_unlock($1)', [AUDIT_LOCK_KEY]);
      other.release();
    }
    // A row left running by a process that died: not shown as running, closed by the next start.
    await gw.pool.query(`INSERT INTO audit_runs (id, started_at, status) VALUES ('aud_dead', now() - interval '1 hour', 'running')`);
    expect((await status()).running).to.equal(null);
    const run = await runToEnd();
    expect(run.status).to.equal('passed');
    const { rows } = await gw.pool.query<{ status: string; finished_at: Date | null }>(`SELECT status, finished_at FROM audit_runs WHERE id = 'aud_dead'`);
    expect(rows[0]!.status).to.equal('abandoned');
    expect(rows[0]!.finished_at).to.be.instanceOf(Date);
  });

  it('has freed the audit for the next start by the time its result shows', async () => {
    // The connection that took the lock closes only when the test lets it. The lock used to go
    // with that connection, a moment after the result showed, and a start in that moment was
    // refused (the suite saw it on a busy machine).
    let letClose!: () => void;
    const closing = new Promise<void>((resolve) => (letClose = resolve));
    const audits = new AuditRuns({
      pool: gw.pool,
      store: gw.store,
      projections: allProjections,
      logger: gw.logger,
      clock: () => new Date(),
      openPool: (size) => {
        const pool: Pool = createPool(gw.pool.options.connectionString!, size);
        if (size > 1) return pool;
        const end = pool.end.bind(pool);
        return Object.assign(pool, { end: async () => closing.then(() => end()) });
      },
    });
    try {
      const run = await audits.start('req_audit_lock');
      await waitFor('the result recorded', async () => (await audits.status()).last?.id === run.id, 60_000, 100);
      const other = await gw.pool.connect();
      try {
        const { rows } = await other.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [AUDIT_LOCK_KEY]);
        expect(rows[0]!.locked, 'the audit lock free once the result shows').to.equal(true);
        await other.query('SELECT pg_advisory_unlock($1)', [AUDIT_LOCK_KEY]);
      } finally {
        other.release();
      }
    } finally {
      letClose();
      await audits.stop();
    }
  });

  it('needs the admin token and refuses query parameters', async () => {
    for (const method of ['GET', 'POST']) {
      const res = await gw.api(key, method, '/admin/v1/audit');
      expect(res.status, method).to.equal(401);
      expect(res.body.error.code).to.equal('invalid_admin_token');
      const bad = await gw.admin(method, '/admin/v1/audit?full=true');
      expect(bad.status, method).to.equal(400);
      expect(bad.body.error).to.include({ param: 'full', type: 'invalid_request_error' });
    }
  });
});
