import Router from '@koa/router';
import type { FeatureFactory } from '../feature-types';
import type { GatewayState } from '../http/context';
import { shapedRouter } from '../http/error-shape';
import { specStatuses } from '../http/routing';
import { getRiskReport, handleRiskCompletion, type RiskDeps } from './risk/handler';
import type { Logger } from '../log';
import { handleWebQa, type WebQaDeps } from './webqa/handler';
import { KeptConversations, PURGE_INTERVAL_MS, purgeExpiredPeriodically } from './webqa/kept-conversations';

export type AgentsDeps = RiskDeps & WebQaDeps & { readonly logger: Pick<Logger, 'error'> };

/**
 * The agents: public-information risk screening over the web-search channel (errors in shape A)
 * and the web Q&A agent, whose turns go to the bot's provider through its channel's protocol
 * adapter (src/upstreams/bot-chat.ts); the conversations the gateway keeps itself are purged
 * once expired.
 */
export const agentsFeature: FeatureFactory<AgentsDeps> = (deps) => {
  // The spec lists no 429 for web Q&A, and none at all for risk, which is treated like it.
  const agentStatuses = specStatuses(400, 401, 402, 502);
  const risk = shapedRouter('risk', { prefix: '/v1/agent/risk', prefixes: ['/v1/agent/risk/'] });
  for (const path of ['/chat/completions', '/chat/completion']) risk.post(path, agentStatuses, (ctx) => handleRiskCompletion(deps, ctx));
  risk.get('/reports/:id', (ctx) => getRiskReport(deps, ctx, ctx.params.id!));
  const webQa = new Router<GatewayState>({ sensitive: true });
  for (const path of ['/v1/agent/chat/completions', '/v1/agent/chat/completion', '/v1/agents/chat/completions']) webQa.post(path, agentStatuses, (ctx) => handleWebQa(deps, ctx));
  let purging: { stop(): Promise<void> } | null = null;
  return {
    routers: [risk, webQa],
    start() {
      const conversations = new KeptConversations(deps.pool, deps.config.webQaHistoryTtlMs);
      purging = purgeExpiredPeriodically(conversations, {
        everyMs: Math.min(PURGE_INTERVAL_MS, deps.config.webQaHistoryTtlMs),
        clock: deps.clock,
        onError: (err) => deps.logger.error({ err }, 'could not purge expired web Q&A conversations'),
      });
    },
    async stop() {
      await purging?.stop();
    },
  };
};
