import type { RecordedEvent } from '../src/eventstore/port';
import type { Projection } from '../src/projections-runtime/consumer';
import { RISK_REPORT_COMPLETED, type RiskReportCompleted } from '../src/agents/risk/events';

/** Every stored risk report, readable by its owner through GET /v1/agent/risk/reports/{id}. */
export const riskReportsProjection: Projection = {
  name: 'risk_reports',
  tables: ['risk_reports'],
  ddl: `
    CREATE TABLE risk_reports (
      report_id text PRIMARY KEY,
      account_id text NOT NULL,
      request_id text NOT NULL,
      identity_status text NOT NULL,
      keyword text NOT NULL,
      identify_only boolean NOT NULL,
      result jsonb NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX risk_reports_account ON risk_reports (account_id, created_at);`,
  eventTypes: new Set([RISK_REPORT_COMPLETED]),
  async apply(tx, raw) {
    const { data } = raw as RecordedEvent & RiskReportCompleted;
    await tx.query(
      `INSERT INTO risk_reports (report_id, account_id, request_id, identity_status, keyword, identify_only, result, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [data.reportId, data.accountId, data.requestId, data.result.company.identity_status, data.result.company.keyword, data.identifyOnly, JSON.stringify(data.result), data.createdAt],
    );
  },
};
