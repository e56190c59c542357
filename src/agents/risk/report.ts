import type { Company } from './identity';
import type { Card, DimensionItem } from './screening';
import type { WriterUsage } from './writer';

/**
 * What every summary ends with, whatever the writer wrote: the gateway appends it itself, so the
 * caveats of the specification are always stated.
 */
export const CAVEATS =
  'Caveats: missing evidence does not establish that there is no risk. Historical records do not establish the current status of the company. ' +
  'Every lead is an unverified web search result and needs verification against the original source; party roles, relationships, dates and outcomes may be wrong.';

export interface Coverage {
  /** The nine dimensions. */
  readonly total: number;
  /** Dimensions searched (answered or failed). */
  readonly queried: number;
  readonly failed: number;
  /** Dimensions with displayed (unverified) leads. */
  readonly with_evidence: number;
  /** Dimensions without a lead, searched or not (see `queried`): no evidence, which does not mean no risk. */
  readonly unverified: number;
}

export interface RiskUsage {
  /** Searches answered by the provider and billed (empty answers included). */
  readonly query_calls: number;
  /** Whether any search was answered from the search cache (not billed). */
  readonly query_cached: boolean;
  /** How many searches the cache answered. */
  readonly query_cached_calls: number;
  /** The provider's request ids of the billed searches. */
  readonly query_request_ids: readonly string[];
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

export interface RiskReport {
  readonly source: 'web_search';
  readonly rating: 'unknown';
  readonly score: null;
  readonly summary: string;
  readonly fetched_at: number;
  readonly coverage: Coverage;
  readonly warnings: readonly string[];
  readonly dimensions: readonly DimensionItem[];
}

/** The risk screening result: the non-streamed body, the last chunk's `risk_result`, and what GET returns. */
export interface RiskResult {
  readonly id: string;
  readonly object: 'chat.completion';
  readonly created: number;
  readonly model: string;
  readonly company: Company;
  readonly report: RiskReport;
  readonly choices: readonly { index: number; message: { role: 'assistant'; content: string }; finish_reason: 'stop' }[];
  readonly cards: readonly Card[];
  readonly usage: RiskUsage;
}

export const DIMENSION_COUNT = 9;

/** The counts of the report's dimensions (all nine), of which `queried` were searched. */
export function coverageOf(dimensions: readonly DimensionItem[], queried: number): Coverage {
  const count = (status: string) => dimensions.filter((d) => d.status === status).length;
  return { total: DIMENSION_COUNT, queried, failed: count('failed'), with_evidence: count('evidence_found'), unverified: count('unverified') };
}

/** The summary when no writer runs (identity only, nothing to screen) or when it failed. */
export function identitySummary(company: Company): string {
  switch (company.identity_status) {
    case 'matched':
      return `Identity matched: ${company.resolved_name}, unified social credit code ${company.credit_code}${company.status ? ` (registration status: ${company.status})` : ''}, from an official registry document.`;
    case 'user_provided':
      return `Identity not verified: "${company.keyword}" could not be matched to a unique company with a valid credit code in an official document; it is used as written.`;
    default:
      return company.credit_code
        ? `Company unresolved: no legal name was found for unified social credit code ${company.credit_code}.`
        : `Company unresolved: "${company.keyword}" is not a valid unified social credit code and no company name was given.`;
  }
}

export function fallbackSummary(name: string, dimensions: readonly DimensionItem[]): string {
  const coverage = coverageOf(dimensions, dimensions.length);
  const withEvidence = dimensions.filter((d) => d.status === 'evidence_found').map((d) => d.label);
  return (
    `Screening of ${name}: ${coverage.with_evidence} of ${coverage.total} dimensions show unverified web leads` +
    (withEvidence.length > 0 ? ` (${withEvidence.join(', ')})` : '') +
    `; ${coverage.unverified} show none; ${coverage.failed} could not be searched.`
  );
}

/** A warning when displayed leads are old: years-old records say nothing about today. */
export function historicalWarning(dimensions: readonly DimensionItem[], now: Date, years = 3): string | null {
  const cutoff = new Date(now);
  cutoff.setUTCFullYear(cutoff.getUTCFullYear() - years);
  const limit = cutoff.toISOString().slice(0, 10);
  const old = dimensions.flatMap((d) => d.samples.map((s) => s.date || s.page_published_at).filter((date) => date !== '' && date < limit));
  if (old.length === 0) return null;
  const oldest = old.sort()[0]!;
  return `${old.length} lead(s) are dated more than ${years} years ago (oldest ${oldest}); historical records do not establish current status`;
}

export function usageOf(searches: readonly { cached: boolean; requestId: string }[], writer: WriterUsage): RiskUsage {
  const billed = searches.filter((s) => !s.cached);
  return {
    query_calls: billed.length,
    query_cached: searches.some((s) => s.cached),
    query_cached_calls: searches.length - billed.length,
    query_request_ids: billed.map((s) => s.requestId),
    prompt_tokens: writer.prompt_tokens,
    completion_tokens: writer.completion_tokens,
    total_tokens: writer.total_tokens,
  };
}
