import type Router from '@koa/router';
import { chatPricing } from '../chat/model-type';
import { readJson } from '../http/body';
import { authOf, type GatewayState } from '../http/context';
import { ApiError } from '../http/errors';
import { shapedRouter } from '../http/error-shape';
import { keyAllows } from '../http/models-access';
import { listBody, pageParams } from '../http/pagination';
import { specStatuses } from '../http/routing';
import { validator } from '../http/validation';
import { createTask, nothingOutside } from '../tasks/creation';
import type { FileProbe } from './file-probe';
import { minutesCapabilities } from './model-type';
import { minutesEstimate, minutesModel, normalizeMinutesRequest, parseMinutesRequest, type NormalizedMinutesRequest } from './request';
import { SUMMARY_CREATION, SUMMARY_TASK, type SummaryRequest } from './summary-kind';
import { MINUTES_CREATION, MINUTES_TASK } from './kind';
import { decodeRow } from '../tasks/kind';
import { planSummaryParts } from './summarizer';
import { partLimitsOf, type FrozenSummary } from './summary-parts';
import { transcriptOf } from './transcript';
import { renderMinutes, renderSummary } from './view';
import type { Catalog } from '../billing/catalog';
import type { RateLimiter } from '../http/rate-limit';
import type { TaskEngine } from '../tasks/engine';

/** What the minutes and summaries endpoints use. */
export interface MinutesRouteDeps {
  readonly tasks: TaskEngine;
  readonly catalog: Catalog;
  readonly rateLimiter: Pick<RateLimiter, 'take'>;
}

/** POST /v1/audio/minutes, GET /v1/audio/minutes/{taskId}, GET /v1/audio/minutes (errors in shape B). */
export function minutesRouter(deps: MinutesRouteDeps, probe: FileProbe): Router<GatewayState> {
  const router = shapedRouter('minutes', { prefix: '/v1/audio/minutes', prefixes: ['/v1/audio/minutes'] });
  const tasks = deps.tasks;

  router.post('/', (ctx) =>
    createTask(deps, ctx, {
      kind: MINUTES_TASK,
      policy: MINUTES_CREATION,
      async check(ctx) {
        const body = parseMinutesRequest(await readJson(ctx));
        const model = minutesModel(deps.catalog, body.model);
        if (!keyAllows(authOf(ctx), model.id)) throw new ApiError(400, 'model_not_allowed', `this API key may not use the model '${model.id}'`, { param: 'model' });
        return { body, model };
      },
      async complete({ body, model }, ctx) {
        // Probed first: the file's media type decides file_type when the URL's suffix does not.
        const probed = await probe.inspect(body.file_url);
        const normalized = normalizeMinutesRequest(deps.catalog, model, body, ctx.state.requestId, probed.mediaType);
        const fileBytes = probed.bytes;
        const maxBytes = minutesCapabilities(model).max_file_bytes;
        // The spec's "under 1 GB": a file of exactly max_file_bytes is refused too.
        if (fileBytes !== null && fileBytes >= maxBytes) {
          throw new ApiError(400, 'file_too_large', `the file has ${fileBytes} bytes; ${model.id} accepts files under ${maxBytes} bytes`, { param: 'file_url' });
        }
        const request: NormalizedMinutesRequest = { ...normalized, file_bytes: fileBytes };
        return { model, request, estimate: minutesEstimate(deps.catalog, request), callback: null };
      },
      answer: ({ row, request }) => ({ id: row.task_id, request_id: request.request_id, model: row.model, status: 'processing', created_at: row.created_at.toISOString() }),
    }),
  );

  router.get('/', async (ctx) => {
    const page = pageParams(ctx.query);
    const { rows, hasMore } = await tasks.list('minutes', authOf(ctx).accountId, page);
    ctx.body = listBody(rows.map((r) => renderMinutes(decodeRow(MINUTES_TASK, r))), hasMore, (t) => String(t.id));
  });

  router.get('/:id', specStatuses(401, 404), async (ctx) => {
    const row = await tasks.readDecoded(MINUTES_TASK, ctx.params.id!, authOf(ctx).accountId);
    if (!row) throw new ApiError(404, 'task_not_found', `minutes task ${ctx.params.id} not found`);
    ctx.body = renderMinutes(row);
  });

  return router;
}

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const SUMMARY_REQUEST_SCHEMA = {
  type: 'object',
  properties: { task_id: { type: 'string', minLength: 1, maxLength: 128 } },
  required: ['task_id'],
  additionalProperties: false,
};
const parseSummaryRequest = validator<{ task_id: string }>(SUMMARY_REQUEST_SCHEMA);

/**
 * POST /v1/summaries {task_id}: a new summary of one of the caller's minutes tasks, the only way
 * to get one after a summary failure (nothing retries automatically). 202 with the summary
 * resource; GET /v1/summaries/{id} reads it. Billed as a summary: its own reservation of the
 * summary's upper bound, settled by the tokens observed.
 */
export function summariesRouter(deps: MinutesRouteDeps): Router<GatewayState> {
  const router = shapedRouter('minutes', { prefix: '/v1/summaries', prefixes: ['/v1/summaries'] });
  const tasks = deps.tasks;

  router.post('/', (ctx) =>
    createTask(deps, ctx, {
      kind: SUMMARY_TASK,
      policy: SUMMARY_CREATION,
      async check(ctx) {
        const auth = authOf(ctx);
        const body = parseSummaryRequest(await readJson(ctx));
        const row = await tasks.readDecoded(MINUTES_TASK, body.task_id, auth.accountId);
        if (!row) throw new ApiError(404, 'task_not_found', `minutes task ${body.task_id} not found`);
        if (!keyAllows(auth, row.model)) throw new ApiError(403, 'model_not_allowed', `this API key may not use the model '${row.model}'`, { param: 'task_id' });
        const minutesRequest = row.request;
        if (!minutesRequest.summary) throw new ApiError(400, 'summary_not_supported', `${row.model} tasks are summarised by their provider; summaries are written for models with a summary model`, { param: 'task_id' });
        const transcript = transcriptOf(row.result);
        if (!transcript || (row.status !== 'succeeded' && row.status !== 'failed')) {
          throw new ApiError(400, 'transcription_unavailable', `task ${body.task_id} has no completed transcription to summarise`, { param: 'task_id' });
        }
        const chat = deps.catalog.get(minutesRequest.summary.model);
        if (!chat || chat.type !== 'chat') throw new ApiError(400, 'summary_not_supported', `the summary model ${minutesRequest.summary.model} is no longer available`, { param: 'task_id' });
        const pricing = chatPricing(chat);
        const { model: _model, input_per_million: _input, output_per_million: _output, ...limits } = minutesRequest.summary;
        const summary: FrozenSummary = { model: chat.id, input_per_million: pricing.input_per_million, output_per_million: pricing.output_per_million, ...limits };
        const plan = planSummaryParts(chat, transcript, partLimitsOf(summary, chat));
        const request: SummaryRequest = { request_id: ctx.state.requestId, task_id: row.task_id, summary };
        return { model: chat, request, estimate: plan.parts.reduce((sum, part) => sum + part.estimate, 0), callback: null };
      },
      complete: nothingOutside,
      answer: ({ row, request }) => ({
        id: row.task_id,
        object: 'minutes.summary',
        request_id: request.request_id,
        task_id: request.task_id,
        model: row.model,
        status: 'processing',
        created_at: row.created_at.toISOString(),
      }),
    }),
  );

  router.get('/', async (ctx) => {
    const page = pageParams(ctx.query);
    const { rows, hasMore } = await tasks.list('summary', authOf(ctx).accountId, page);
    ctx.body = listBody(rows.map((r) => renderSummary(decodeRow(SUMMARY_TASK, r))), hasMore, (t) => String(t.id));
  });

  router.get('/:id', async (ctx) => {
    const row = await tasks.readDecoded(SUMMARY_TASK, ctx.params.id!, authOf(ctx).accountId);
    if (!row) throw new ApiError(404, 'summary_not_found', `summary ${ctx.params.id} not found`);
    ctx.body = renderSummary(row);
  });

  return router;
}
