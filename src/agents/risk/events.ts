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
    readonly result: RiskResult;
  };
}

export const RISK_REPORT_COMPLETED = 'RiskReportCompleted';

export function riskReportStream(reportId: string): string {
  return `risk-${reportId}`;
}
