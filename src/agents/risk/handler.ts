import { charge as chargeOf } from '../../billing/money';
import type { RequestCharge } from '../../billing/request-charge';
import { metered, type MeteringDeps } from '../../billing/metered';
import { isDatabaseUnavailable } from '../../db/unavailable';
import { readJson } from '../../http/body';
import { authOf, type GatewayContext } from '../../http/context';
import { ApiError, toApiError } from '../../http/errors';
import { SseResponse } from '../../http/sse';
import { newId } from '../../ids';
import { READ_MODEL_SCHEMA } from '../../projections-runtime/consumer';
import { configuredModel, requireAllowed } from '../access';
import { agentCapabilities, searchPricing } from '../model-types';
import { DIMENSIONS } from './dimensions';
import { RISK_REPORT_COMPLETED, riskReportStream, type RiskReportCompleted } from './events';
import { extractSubject } from './extract';
import { identityQuery } from './identity';
import { coverageOf, type RiskResult, type RiskUsage } from './report';
import { parseRiskRequest } from './schemas';
import { screenCompany, type ScreeningInput, type ScreeningOutcome, type ScreeningDeps } from './screen-company';
import { seconds } from './screening';
import { writerEstimate } from './writer';
import { recordFact } from '../../domain/facts';
import type { Pool } from 'pg';
import type { Catalog } from '../../billing/catalog';
import type { Config } from '../../config';
import type { EventStore } from '../../eventstore/port';
import type { ConsumerProgress } from '../../projections-runtime/progress';

/** What the risk agent's endpoints use. */
export type RiskDeps = MeteringDeps &
  ScreeningDeps & {
    readonly catalog: Catalog;
    readonly store: Pick<EventStore, 'append'>;
    readonly progress: Pick<ConsumerProgress, 'waitFor' | 'waitForStream'>;
    readonly pool: Pick<Pool, 'query'>;
    readonly config: Pick<Config, 'riskSearchModel' | 'riskWriterModel' | 'ssePingMs' | 'projectionWaitMs'>;
  };

export const RISK_AGENT_MODEL = 'risk-agent';

/**
 * POST /v1/agent/risk/chat/completions: reserve the most the request can cost (every search at
 * the search rate, plus the writer's budget), screen, settle what was used, store the report, and
 * answer it (plain, or streamed as chat-completion chunks ending with the whole result).
 */
export async function handleRiskCompletion(deps: RiskDeps, ctx: GatewayContext): Promise<void> {
  const request = parseRiskRequest(await readJson(ctx));
  const agent = configuredModel(deps.catalog, RISK_AGENT_MODEL, 'agent', 'risk agent');
  const { max_messages: maxMessages, official_sources: sources } = agentCapabilities(agent);
  const used = request.messages.slice(-maxMessages);
  const lastUser = [...used].reverse().find((m) => m.role === 'user');
  if (!lastUser) throw new ApiError(400, 'user_message_required', `a user message is required among the last ${maxMessages} messages`, { param: 'messages' });
  const subject = extractSubject(used);
  if (subject.name === null && subject.validCode === null && subject.invalidCodes.length === 0) {
    throw new ApiError(400, 'company_required', 'name the company (for example 「青峦数据科技有限公司」) or give its unified social credit code', { param: 'messages' });
  }
  const identifyOnly = request.identify === true;
  const search = configuredModel(deps.catalog, deps.config.riskSearchModel, 'search', 'web-search');
  const writer = identifyOnly ? null : configuredModel(deps.catalog, deps.config.riskWriterModel, 'chat', 'report writer');
  requireAllowed(authOf(ctx), writer ? [agent, search, writer] : [agent, search], 'the risk endpoint');

  const searches = identityQuery(subject) === null ? 0 : identifyOnly ? 1 : 1 + DIMENSIONS.length;
  const estimate = chargeOf([[searches, searchPricing(search).per_query]]) + (writer && searches > 0 ? writerEstimate(writer) : 0);
  const reportId = newId('risk');
  const input = {
    subject,
    identifyOnly,
    sources,
    search,
    writer,
    requestId: ctx.state.requestId,
    logger: ctx.state.logger,
  };
  await metered(deps, ctx, { model: agent, estimate }, (charge) =>
    request.stream ? streamRisk(deps, ctx, reportId, input, charge) : completeRisk(deps, ctx, reportId, input, charge),
  );
}

type BaseInput = Omit<ScreeningInput, 'stream' | 'onText' | 'signal' | 'settleInterrupted' | 'servedBy'>;

async function completeRisk(deps: RiskDeps, ctx: GatewayContext, reportId: string, input: BaseInput, charge: RequestCharge): Promise<void> {
  const outcome = await screenCompany(deps, {
    ...input,
    stream: false,
    onText: async () => undefined,
    settleInterrupted: settleInterrupted(reportId, input, charge),
    servedBy: servedBy(charge),
  });
  const { json } = await settleAndStore(deps, ctx, reportId, input, outcome, charge);
  // The stored text itself: GET /v1/agent/risk/reports/{id} answers these very bytes.
  ctx.type = 'application/json';
  ctx.body = json;
}

/** The screening's calls as its charge names them: the writer the main call, each search a part. */
function servedBy(charge: RequestCharge): ScreeningInput['servedBy'] {
  return { writer: (channel) => charge.servedBy(channel), search: (channel) => charge.partServedBy(channel) };
}

/** Bills what an interrupted screening used (answered searches, a paid writer) before its error propagates. */
function settleInterrupted(reportId: string, input: BaseInput, charge: RequestCharge): ScreeningInput['settleInterrupted'] {
  return ({ usage, pricing }, cause) =>
    charge.settle(pricing, { ...settlementDetails(reportId, input, usage), interrupted: cause instanceof ApiError ? cause.code : 'internal_error' });
}

function settlementDetails(reportId: string, input: BaseInput, usage: RiskUsage): Record<string, unknown> {
  return {
    model: RISK_AGENT_MODEL,
    report_id: reportId,
    search_model: input.search.id,
    query_calls: usage.query_calls,
    query_cached_calls: usage.query_cached_calls,
    query_request_ids: usage.query_request_ids,
    writer_model: input.writer?.id ?? null,
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
  };
}

/**
 * The streaming design: the answer opens at once (after the reservation) with the assistant role
 * chunk and `: ping` comments while the searches run; the summary follows as content deltas as the
 * writer streams it (then the gateway's fallback, if the writer failed, and the caveats); then a
 * `finish_reason: "stop"` chunk; then one chunk with `choices: []`, `usage` and `risk_result` (the
 * same object as the non-streamed answer, and as GET /v1/agent/risk/reports/{id}); then
 * `data: [DONE]`. A failure after the stream opened is sent as `data: {"error": {message, code},
 * "request_id"}` (shape A) and ends the stream.
 */
async function streamRisk(deps: RiskDeps, ctx: GatewayContext, reportId: string, input: BaseInput, charge: RequestCharge): Promise<void> {
  const sse = new SseResponse(ctx, deps.config.ssePingMs);
  const writerAbort = new AbortController();
  sse.clientGone.addEventListener('abort', () => writerAbort.abort());
  const base = { id: reportId, object: 'chat.completion.chunk', created: seconds(deps.clock()), model: RISK_AGENT_MODEL };
  const delta = (d: Record<string, unknown>, finish: string | null) => ({ ...base, choices: [{ index: 0, delta: d, finish_reason: finish }] });
  try {
    await sse.data(delta({ role: 'assistant', content: '' }, null));
    const outcome = await screenCompany(deps, {
      ...input,
      stream: true,
      signal: writerAbort.signal,
      onText: (piece) => sse.data(delta({ content: piece }, null)),
      settleInterrupted: settleInterrupted(reportId, input, charge),
      servedBy: servedBy(charge),
    });
    const { result } = await settleAndStore(deps, ctx, reportId, input, outcome, charge);
    await sse.data(delta({}, 'stop'));
    // Serialized from the same object as the stored text: `risk_result` has its bytes.
    await sse.data({ ...base, choices: [], usage: result.usage, risk_result: result });
    await sse.data('[DONE]');
  } catch (err) {
    const error = toApiError(err) ?? new ApiError(500, 'internal_error', 'internal error');
    if (!charge.closed) await charge.release(`risk screening failed: ${error.code}`);
    if (error.status >= 500) ctx.state.logger.error({ err }, 'risk stream failed');
    await sse.data({ error: { message: error.message, code: error.code }, request_id: ctx.state.requestId });
  } finally {
    sse.end();
  }
}

/**
 * Settles before storing: completed searches are billed even if storing the report fails; a
 * report the database cannot take while it is away is answered all the same. Returns
 * the result and its JSON text, which the event carries as it is (an event store may reorder the
 * keys of a JSON object), so the report can be answered again byte for byte.
 */
async function settleAndStore(
  deps: RiskDeps,
  ctx: GatewayContext,
  reportId: string,
  input: BaseInput,
  outcome: ScreeningOutcome,
  charge: RequestCharge,
): Promise<{ result: RiskResult; json: string }> {
  await charge.settle(outcome.pricing, settlementDetails(reportId, input, outcome.usage));
  const now = deps.clock();
  const result: RiskResult = {
    id: reportId,
    object: 'chat.completion',
    created: seconds(now),
    model: RISK_AGENT_MODEL,
    company: outcome.company,
    report: {
      source: 'web_search',
      rating: 'unknown',
      score: null,
      summary: outcome.summary,
      fetched_at: seconds(now),
      coverage: coverageOf(outcome.dimensions, outcome.queried),
      warnings: outcome.warnings,
      dimensions: outcome.dimensions,
    },
    choices: [{ index: 0, message: { role: 'assistant', content: outcome.summary }, finish_reason: 'stop' }],
    cards: outcome.cards,
    usage: outcome.usage,
  };
  const json = JSON.stringify(result);
  const event: RiskReportCompleted = {
    type: RISK_REPORT_COMPLETED,
    data: {
      reportId,
      accountId: authOf(ctx).accountId,
      requestId: ctx.state.requestId,
      identifyOnly: input.identifyOnly,
      createdAt: now.toISOString(),
      identityStatus: result.company.identity_status,
      keyword: result.company.keyword,
      resultJson: json,
    },
  };
  try {
    const appended = await recordFact(deps.store, riskReportStream(reportId), event, { expected: 'no_stream', metadata: { requestId: ctx.state.requestId } });
    // Read your writes: the report, and the cache entries appended before it, are readable once answered.
    await deps.progress.waitFor(appended.position, ['risk_reports', 'search_cache'], deps.config.projectionWaitMs);
  } catch (err) {
    // The screening is done and charged (the settlement journal keeps its charge while the database
    // is away): the client gets its report, which GET /v1/agent/risk/reports/{id} will not find.
    if (!isDatabaseUnavailable(err)) throw err;
    ctx.state.logger.warn({ err, reportId }, 'database unreachable: the risk report is answered but not stored');
  }
  return { result, json };
}

/** GET /v1/agent/risk/reports/{id}: a stored report of the caller's account, as it was answered. */
export async function getRiskReport(deps: RiskDeps, ctx: GatewayContext, reportId: string): Promise<void> {
  const auth = authOf(ctx);
  requireAllowed(auth, [configuredModel(deps.catalog, RISK_AGENT_MODEL, 'agent', 'risk agent')], 'reading risk reports');
  await deps.progress.waitForStream(riskReportStream(reportId), ['risk_reports'], deps.config.projectionWaitMs);
  const { rows } = await deps.pool.query<{ result: string }>(`SELECT result FROM ${READ_MODEL_SCHEMA}.risk_reports WHERE report_id = $1 AND account_id = $2`, [
    reportId,
    auth.accountId,
  ]);
  if (!rows[0]) throw new ApiError(404, 'report_not_found', `no risk report ${reportId} for this account`);
  // The text as it was answered, not a re-serialization.
  ctx.type = 'application/json';
  ctx.body = rows[0].result;
}
