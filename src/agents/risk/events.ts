import type { RiskResult } from './report';

/**
 * A finished risk screening, stored as it was answered: stream `risk-<reportId>`, one event.
 * It carries the whole result (the leads it used included), so later searches and newer cache
 * entries never change a stored report.
 */
export interface RiskReportCompleted {
  readonly type: 'RiskReportCompleted';
  readonly data: {
    readonly reportId: string;
    readonly accountId: string;
    readonly requestId: string;
    readonly identifyOnly: boolean;
    readonly createdAt: string;
    readonly identityStatus: string;
    readonly keyword: string;
    /**
     * The result (RiskResult) as the JSON text that was answered. Text, not an object: an event
     * store may keep JSON objects in a form that reorders their keys (PostgreSQL's jsonb does),
     * and GET /v1/agent/risk/reports/{id} answers the report exactly as it was answered.
     */
    readonly resultJson: string;
  };
}

/** Events appended before `resultJson` existed carried the result as an object. */
export interface LegacyRiskReportData {
  readonly reportId: string;
  readonly accountId: string;
  readonly requestId: string;
  readonly identifyOnly: boolean;
  readonly createdAt: string;
  readonly result: RiskResult;
}

export const RISK_REPORT_COMPLETED = 'RiskReportCompleted';

export function riskReportStream(reportId: string): string {
  return `risk-${reportId}`;
}

/** RiskReportCompleted as the log holds it: today's data, or the data of an event appended before `resultJson`. */
export interface StoredRiskReportCompleted {
  readonly type: RiskReportCompleted['type'];
  readonly data: RiskReportCompleted['data'] | LegacyRiskReportData;
}
