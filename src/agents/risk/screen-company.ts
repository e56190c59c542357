import type { ModelEntry } from '../../billing/catalog';
import { priceLine, pricingOf, type Pricing } from '../../billing/money';
import { ApiError } from '../../http/errors';
import type { Logger } from '../../log';
import { UpstreamError } from '../../upstreams/errors';
import { mapBounded } from '../concurrency';
import { searchPricing, type OfficialSources } from '../model-types';
import type { SearchResult } from '../search/events';
import { WebSearch, type WebSearchDeps } from '../search/web-search';
import { DIMENSIONS, dimensionQuery } from './dimensions';
import type { Subject } from './extract';
import { codeLookupQuery, identityQuery, resolveIdentity, type Company } from './identity';
import { CAVEATS, fallbackSummary, historicalWarning, identitySummary, usageOf, type RiskUsage } from './report';
import { cardFor, screenDimension, unqueriedDimensions, type Card, type DimensionItem } from './screening';
import { NO_WRITER_USAGE, runWriter, writerLine, writerMessages, type WriterUsage, type WriterDeps } from './writer';
import type { Config } from '../../config';

/** What a screening uses: the cached web search, the report writer and their settings. */
export type ScreeningDeps = WebSearchDeps &
  WriterDeps & {
    readonly config: Pick<Config, 'riskSearchConcurrency' | 'searchCacheTtlMs'>;
  };

export interface ScreeningInput {
  readonly subject: Subject;
  readonly identifyOnly: boolean;
  /** Where each search looks, and what counts as official (the risk agent's catalog entry). */
  readonly sources: OfficialSources;
  readonly search: ModelEntry;
  /** null in identify mode. */
  readonly writer: ModelEntry | null;
  readonly requestId: string;
  readonly logger: Logger;
  /** Stream the writer's answer (else one call). */
  readonly stream: boolean;
  /** Receives the chat message's text, piece by piece, as it is produced. */
  readonly onText: (piece: string) => Promise<void>;
  /** Aborts the writer (the client left). */
  readonly signal?: AbortSignal;
  /**
   * Awaited before an error that is not a search's upstream failure (a bug, the database) leaves
   * screenCompany after searches were answered or the writer was paid: it bills what was used, so
   * such a failure partway never releases searches the provider already answered. The error then
   * propagates unchanged.
   */
  readonly settleInterrupted: (used: { readonly usage: RiskUsage; readonly pricing: Pricing }, cause: unknown) => Promise<void>;
  /**
   * Told the channel of each call the charge covers as it is served: the writer's is the
   * charge's main call, each answered search's one of its parts (RequestCharge).
   */
  readonly servedBy: { readonly writer: (channel: string) => void; readonly search: (channel: string) => void };
}

export interface ScreeningOutcome {
  readonly company: Company;
  /** All nine, searched or not. */
  readonly dimensions: readonly DimensionItem[];
  /** How many of them were searched (answered or failed). */
  readonly queried: number;
  readonly cards: readonly Card[];
  readonly warnings: readonly string[];
  readonly summary: string;
  readonly usage: RiskUsage;
  /** What the request costs: billed searches at the search rate plus the writer's tokens. */
  readonly pricing: Pricing;
}

interface SearchRecord {
  readonly cached: boolean;
  readonly requestId: string;
}

/**
 * The risk agent's work: one identity search (and, for a name with a code the name's registry
 * pages do not show, one by the code, except in identify mode), then (unless only identity was
 * asked for, or no legal name stands behind a bare credit code) one search per dimension, a bounded number at a
 * time, and the writer. A failed search costs nothing and fails only its dimension; when not a
 * single search could be answered the request fails with 502 (and nothing is billed). Any other
 * error is held until the searches in flight have finished, and what was answered is settled
 * (`settleInterrupted`) before it propagates.
 */
export async function screenCompany(deps: ScreeningDeps, input: ScreeningInput): Promise<ScreeningOutcome> {
  // Answered searches by the order they were asked in (they finish in any order).
  const answered: (SearchRecord | undefined)[] = [];
  const searches = (): SearchRecord[] => answered.filter((s): s is SearchRecord => s !== undefined);
  const writerUsage = { current: NO_WRITER_USAGE };
  try {
    return await screen(deps, input, answered, searches, writerUsage);
  } catch (err) {
    const used = searches();
    if (used.length === 0 && writerUsage.current.total_tokens === 0) throw err;
    try {
      await input.settleInterrupted(billOf(input, used, writerUsage.current), err);
    } catch (settleErr) {
      input.logger.error({ err: settleErr }, 'could not bill the searches of an interrupted risk screening');
    }
    throw err;
  }
}

async function screen(
  deps: ScreeningDeps,
  input: ScreeningInput,
  answered: (SearchRecord | undefined)[],
  searches: () => SearchRecord[],
  writerUsage: { current: WriterUsage },
): Promise<ScreeningOutcome> {
  const web = new WebSearch(deps, input.search);
  const { sources } = input;
  let attempted = 0;
  const search = async (
    ask: { query: string; vertical: string; domains: readonly string[] },
    target: string,
  ): Promise<{ results: readonly SearchResult[]; fetchedAt: Date } | { failure: string }> => {
    const slot = attempted++;
    try {
      const answer = await web.search(ask, { requestId: input.requestId, logger: input.logger });
      answered[slot] = { cached: answer.cached, requestId: answer.requestId };
      if (answer.channel !== null) input.servedBy.search(answer.channel);
      return answer;
    } catch (err) {
      if (!(err instanceof UpstreamError)) throw err;
      input.logger.warn({ err, target }, 'risk search failed');
      return { failure: err.message };
    }
  };
  const noAnswer = (): ApiError => new ApiError(502, 'search_unavailable', 'the web-search channel answered none of the searches; nothing was billed');

  const warnings: string[] = [];
  const identitySearch = identityQuery(input.subject);
  let identityResults: readonly SearchResult[] | null = null;
  if (identitySearch) {
    const answer = await search({ ...identitySearch, domains: sources.identity }, 'identity');
    if ('failure' in answer) warnings.push(`the identity search failed (${answer.failure})`);
    else identityResults = answer.results;
  }
  // Identify mode makes at most one search.
  const lookup = identityResults && !input.identifyOnly ? codeLookupQuery(input.subject, identityResults, sources.identity) : null;
  if (lookup && identityResults) {
    const answer = await search({ ...lookup, domains: sources.identity }, 'identity');
    if ('failure' in answer) warnings.push(`the credit code lookup failed (${answer.failure})`);
    else identityResults = [...identityResults, ...answer.results];
  }
  const identity = resolveIdentity(input.subject, identityResults, sources.identity);
  warnings.push(...identity.warnings);
  const { company } = identity;

  if (input.identifyOnly || identity.screeningName === null || !input.writer) {
    if (attempted > 0 && searches().length === 0) throw noAnswer();
    const summary = `${identitySummary(company)}\n\n${CAVEATS}`;
    await input.onText(summary);
    return outcome(input, company, unqueriedDimensions(deps.clock()), 0, [], warnings, summary, searches(), NO_WRITER_USAGE);
  }

  const name = identity.screeningName;
  const screened = await mapBounded(DIMENSIONS, deps.config.riskSearchConcurrency, async (dimension) => {
    const official = sources[dimension.data_type];
    const answer = await search({ query: dimensionQuery(name, dimension), vertical: dimension.domain, domains: official }, dimension.data_type);
    if ('failure' in answer) return { screened: screenDimension(dimension, null, name, official, deps.clock()), failure: `the ${dimension.data_type} (${dimension.label}) search failed (${answer.failure})` };
    return { screened: screenDimension(dimension, answer, name, official, deps.clock()), failure: null };
  });
  if (searches().length === 0) throw noAnswer();
  warnings.push(...screened.flatMap((s) => (s.failure ? [s.failure] : [])));
  const dimensions = screened.map((s) => s.screened.item);
  const historical = historicalWarning(dimensions, deps.clock());
  if (historical) warnings.push(historical);
  const cached = searches().filter((s) => s.cached).length;
  if (cached > 0) warnings.push(`${cached} search answer(s) came from the search cache (younger than ${Math.round(deps.config.searchCacheTtlMs / 3_600_000)} h) and were not billed`);
  const cards = screened.flatMap((s) => cardFor(s.screened, name, company.credit_code) ?? []);

  const writer = input.writer;
  const written = await runWriter(deps, writer, writerMessages({ company, screenedName: name, dimensions, warnings }), {
    stream: input.stream,
    onText: input.onText,
    signal: input.signal,
    logger: input.logger,
    servedBy: input.servedBy.writer,
  });
  writerUsage.current = written.usage;
  let summary = written.text;
  if (written.failure) {
    warnings.push(`the report writer failed (${written.failure}); the gateway wrote the summary`);
    const fallback = `${summary ? '\n\n' : ''}${fallbackSummary(name, dimensions)}`;
    await input.onText(fallback);
    summary += fallback;
  }
  const caveats = `${summary ? '\n\n' : ''}${CAVEATS}`;
  await input.onText(caveats);
  summary += caveats;
  return outcome(input, company, dimensions, dimensions.length, cards, warnings, summary, searches(), written.usage);
}

function outcome(
  input: ScreeningInput,
  company: Company,
  dimensions: readonly DimensionItem[],
  queried: number,
  cards: readonly Card[],
  warnings: readonly string[],
  summary: string,
  searches: readonly SearchRecord[],
  writerUsage: WriterUsage,
): ScreeningOutcome {
  return { company, dimensions, queried, cards, warnings, summary, ...billOf(input, searches, writerUsage) };
}

/** What the answered searches and the writer cost, and the usage that reports them. */
function billOf(input: ScreeningInput, searches: readonly SearchRecord[], writerUsage: WriterUsage): { usage: RiskUsage; pricing: Pricing } {
  const usage = usageOf(searches, writerUsage);
  // Searches are whole multiples of the rate; the writer's tokens are rounded once, on their own line.
  const searchLine = priceLine({ searches: usage.query_calls }, { searches: searchPricing(input.search).per_query });
  return { usage, pricing: input.writer ? pricingOf(searchLine, writerLine(input.writer, writerUsage)) : pricingOf(searchLine) };
}
