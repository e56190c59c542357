import Router from '@koa/router';
import type { FeatureFactory } from '../feature-types';
import type { GatewayState } from '../http/context';
import type { GatewayMetrics } from '../metrics/gateway-metrics';
import { ApiError } from '../http/errors';
import { PromptTokenMemo } from '../billing/prompt-token-memo';
import { handleChatCompletion, type ChatDeps } from './chat-completions';
import { getModel, listModels } from './models-route';
import { handleResponses, type ResponsesDeps } from './responses';
import { StoredResponses, type StoredResponsesDeps } from './stored-responses/service';
import { addStoredResponseRoutes } from './stored-responses/routes';
import type { Clock } from '../feature-types';

type ChatFeatureDeps = Omit<ChatDeps, 'promptTokens' | 'config'> &
  Omit<StoredResponsesDeps, 'config'> & {
    readonly metrics: Pick<GatewayMetrics, 'watchCache'>;
    readonly clock: Clock;
    readonly config: ChatDeps['config'] & StoredResponsesDeps['config'];
  };

/** The model catalog, OpenAI-compatible chat completions, the Responses interface and its stored Responses. */
export const chatFeature: FeatureFactory<ChatFeatureDeps> = ({ metrics, pool, store, progress, clock, ...shared }) => {
  const promptTokens = new PromptTokenMemo();
  metrics.watchCache('prompt_tokens', () => promptTokens.stats());
  const deps: ChatDeps = { ...shared, promptTokens };
  const stored = new StoredResponses({ pool, store, progress, config: shared.config });
  const responsesDeps: ResponsesDeps = { ...deps, stored, clock };
  const router = new Router<GatewayState>({ sensitive: true });
  router.get('/v1/models', (ctx) => listModels(deps.catalog, ctx));
  router.get('/v1/models/:id', (ctx) => {
    if (!getModel(deps.catalog, ctx, ctx.params.id!)) throw new ApiError(404, 'model_not_found', `The model '${ctx.params.id}' does not exist`);
  });
  router.post('/v1/chat/completions', (ctx) => handleChatCompletion(deps, ctx));
  router.post('/v1/responses', (ctx) => handleResponses(responsesDeps, ctx));
  addStoredResponseRoutes(router, { upstreams: shared.upstreams, clock }, stored);
  return { routers: [router] };
};
