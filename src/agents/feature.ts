import Router from '@koa/router';
import type { FeatureFactory } from '../feature-types';
import type { GatewayState } from '../http/context';
import { specStatuses } from '../http/routing';
import { getRiskReport, handleRiskCompletion, type RiskDeps } from './risk/handler';
import { handleWebQa, type WebQaDeps } from './webqa/handler';

export type AgentsDeps = RiskDeps & WebQaDeps;

/**
 * The agents: public-information risk screening over the web-search channel (errors in shape A)
 * and the web Q&A agent proxied to the upstream agent channel.
 */
export const agentsFeature: FeatureFactory<AgentsDeps> = (deps) => {
  const router = new Router<GatewayState>({ sensitive: true });
  // The spec lists no 429 for web Q&A, and none at all for risk, which is treated like it.
  const agentStatuses = specStatuses(400, 401, 402, 502);
  for (const path of ['/v1/agent/risk/chat/completions', '/v1/agent/risk/chat/completion']) router.post(path, agentStatuses, (ctx) => handleRiskCompletion(deps, ctx));
  router.get('/v1/agent/risk/reports/:id', (ctx) => getRiskReport(deps, ctx, ctx.params.id!));
  for (const path of ['/v1/agent/chat/completions', '/v1/agent/chat/completion', '/v1/agents/chat/completions']) router.post(path, agentStatuses, (ctx) => handleWebQa(deps, ctx));
  return {
    routers: [router],
    errorShapes: [[/^\/v1\/agent\/risk\//, 'risk']],
  };
};
