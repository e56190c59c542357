import type { SearchResult } from '../search/events';
import { DIMENSIONS, type Dimension } from './dimensions';
import { mentionsExactName, mentionsName, toSample, type Sample } from './evidence';

/** `evidence_found`: unverified leads are shown; `unverified`: the search found none (which proves nothing); `failed`: no answer. */
export type DimensionStatus = 'evidence_found' | 'unverified' | 'failed';

export interface DimensionItem {
  readonly domain: string;
  readonly data_type: string;
  readonly label: string;
  readonly status: DimensionStatus;
  /** Always null: a count of web pages is not a count of cases. */
  readonly hit_count: null;
  /** How many leads are displayed in `samples`. */
  readonly evidence_count: number;
  readonly fetched_at: number;
  readonly samples: readonly Sample[];
}

/** A card is a dimension's official leads, with a headline. */
export interface Card extends DimensionItem {
  readonly card_type: 'risk_summary';
  readonly rating: 'unknown';
  readonly score: null;
  readonly title: string;
  readonly subtitle: string;
  readonly credit_code: string;
  readonly summary: string;
  readonly source: 'web_search';
  readonly source_type: 'official';
}

/** Leads displayed per dimension. */
export const MAX_SAMPLES = 5;

export interface ScreenedDimension {
  readonly item: DimensionItem;
  /** Displayed leads on an official domain whose page names the company exactly: the card's samples. */
  readonly cardSamples: readonly Sample[];
}

/**
 * One dimension from its search answer (null: the search failed). A result is displayed as a
 * lead when its page mentions the screened name at all; pages about unrelated companies are
 * dropped, repeated URLs shown once.
 */
export function screenDimension(
  dimension: Dimension,
  answer: { results: readonly SearchResult[]; fetchedAt: Date } | null,
  name: string,
  officialDomains: readonly string[],
  failedAt: Date,
): ScreenedDimension {
  const item = (status: DimensionStatus, samples: readonly Sample[], fetchedAt: Date): DimensionItem => ({
    domain: dimension.domain,
    data_type: dimension.data_type,
    label: dimension.label,
    status,
    hit_count: null,
    evidence_count: samples.length,
    fetched_at: seconds(fetchedAt),
    samples,
  });
  if (!answer) return { item: item('failed', [], failedAt), cardSamples: [] };
  const seen = new Set<string>();
  const leads = answer.results
    .filter((r) => mentionsName(`${r.title} ${r.snippet}`, name) && !seen.has(r.url) && seen.add(r.url))
    .slice(0, MAX_SAMPLES)
    .map((r) => ({ sample: toSample(r, officialDomains), exact: mentionsExactName(`${r.title} ${r.snippet}`, name) }));
  const samples = leads.map((l) => l.sample);
  return {
    item: item(samples.length > 0 ? 'evidence_found' : 'unverified', samples, answer.fetchedAt),
    cardSamples: leads.filter((l) => l.exact && l.sample.source_type === 'official').map((l) => l.sample),
  };
}

/**
 * The nine dimensions of a report that searched none (identity only, or nothing to screen): each
 * listed as `unverified` with no leads, since nothing was looked for.
 */
export function unqueriedDimensions(at: Date): DimensionItem[] {
  return DIMENSIONS.map((d) => ({ domain: d.domain, data_type: d.data_type, label: d.label, status: 'unverified', hit_count: null, evidence_count: 0, fetched_at: seconds(at), samples: [] }));
}

/** A `risk_summary` card per dimension with official, exact-name leads. */
export function cardFor(screened: ScreenedDimension, name: string, creditCode: string): Card | null {
  const samples = screened.cardSamples;
  if (samples.length === 0) return null;
  const { item } = screened;
  return {
    card_type: 'risk_summary',
    rating: 'unknown',
    score: null,
    title: `${item.label}：${name}`,
    subtitle: `${samples.length} lead${samples.length === 1 ? '' : 's'} on official sites, unverified`,
    credit_code: creditCode,
    summary: `Official pages that name ${name} exactly. Party roles, relationships, dates and outcomes still need verification against the original documents.`,
    source: 'web_search',
    domain: item.domain,
    data_type: item.data_type,
    label: item.label,
    status: item.status,
    hit_count: null,
    evidence_count: samples.length,
    fetched_at: item.fetched_at,
    source_type: 'official',
    samples,
  };
}

export function seconds(date: Date): number {
  return Math.floor(date.getTime() / 1000);
}
