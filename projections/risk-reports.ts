import type { Projection } from '../src/projections-runtime/consumer';
import { defineProjection } from '../src/projections-runtime/define';
import { RISK_REPORT_COMPLETED, type StoredRiskReportCompleted } from '../src/agents/risk/events';

/**
 * Every stored risk report, readable by its owner through GET /v1/agent/risk/reports/{id}.
 * `result` keeps the JSON text as it was answered, byte for byte: it is `text` rather than
 * `jsonb` (which reorders keys) or `json` (which has no equality operator, and the audit compares
 * read models row by row).
 */
export const riskReportsProjection: Projection = defineProjection<StoredRiskReportCompleted>()({
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
      result text NOT NULL,
      created_at timestamptz NOT NULL
    );
    CREATE INDEX risk_reports_account ON risk_reports (account_id, created_at);`,
  handles: [RISK_REPORT_COMPLETED],
  async apply(tx, { data }) {
    const row =
      'resultJson' in data
        ? { json: data.resultJson, identityStatus: data.identityStatus, keyword: data.keyword }
        : // An older event's object lost its key order in the log; its text is the best there is.
          { json: JSON.stringify(data.result), identityStatus: data.result.company.identity_status, keyword: data.result.company.keyword };
    await tx.query(
      `INSERT INTO risk_reports (report_id, account_id, request_id, identity_status, keyword, identify_only, result, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [data.reportId, data.accountId, data.requestId, row.identityStatus, row.keyword, data.identifyOnly, row.json, data.createdAt],
    );
  },
});
