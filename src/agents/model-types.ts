import { defineModelType, MONEY_SCHEMA, TOKEN_PRICING_SCHEMA, type ModelEntry, type TokenPricing } from '../billing/catalog';
import { DIMENSIONS, type DimensionType } from './risk/dimensions';

/**
 * The catalog types of the agents: `agent` (the risk screening agent), `search` (a web-search
 * channel sold per query) and `bot` (a web Q&A bot billed by the tokens it reports).
 */

/**
 * Where the risk screening looks, per search: the identity search's domains (the business
 * registry) and each dimension's (courts, tax bureaus). Each search asks its provider for pages on
 * these domains only (a domain filter: Tavily's `include_domains`, Bocha's `include`), and only a
 * page on one of them (the host or a subdomain) counts as official: it can resolve an identity, or
 * stand on a dimension's card.
 */
export type OfficialSources = Readonly<Record<'identity' | DimensionType, readonly string[]>>;

/** An agent has no price of its own: what it uses (searches, the writer) is billed at those models' rates. */
export interface AgentCapabilities {
  /** Only the last this many messages of a request are read. */
  readonly max_messages: number;
  readonly official_sources: OfficialSources;
}

/** A lower-case host name of at least two labels (`court.gov.cn`), as providers' domain filters take them. */
const HOST_NAME_SCHEMA = { type: 'string', maxLength: 253, pattern: '^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$' } as const;

/** Every search of the screening names 1 to 20 domains (20: the most Bocha's `include` takes). */
const DOMAIN_LIST_SCHEMA = { type: 'array', items: HOST_NAME_SCHEMA, minItems: 1, maxItems: 20, uniqueItems: true } as const;

const SOURCE_KEYS = ['identity', ...DIMENSIONS.map((d) => d.data_type)];

export interface SearchPricing {
  /** Charged for every successful search answered by the upstream, an empty answer included. */
  readonly per_query: number;
}

export interface SearchCapabilities {
  /** Results asked of the provider per query. */
  readonly max_results: number;
}

export type BotPricing = TokenPricing;

export type BotTier = 'pro' | 'basic';

export interface BotCapabilities {
  /** Pro bots answer with follow-up suggestions and cards and accept mixed-media messages. */
  readonly tier: BotTier;
  readonly max_output_tokens: number;
  readonly context_window: number;
  /**
   * Models a request's `model` may name besides the bot's own id (empty: the bot's id only). The
   * spec lists `model` without saying what it does; neither Coze nor Ark's bots take a model per
   * turn (a bot answers with the model it is configured with), so a named model is checked
   * (known, offered, allowed to the key) and not sent: docs/api/agents.md.
   */
  readonly models: readonly string[];
  /** The provider's id of the bot, when it differs from the gateway's id (hidden from clients). */
  readonly upstream_model?: string;
}

export const agentModelType = defineModelType<Readonly<Record<string, never>>, AgentCapabilities>('agent', {
  // No member may be added: the risk agent has no per-call fee.
  pricing: { type: 'object', properties: {}, additionalProperties: false },
  capabilities: {
    type: 'object',
    properties: {
      max_messages: { type: 'integer', minimum: 1, maximum: 100 },
      official_sources: {
        type: 'object',
        properties: Object.fromEntries(SOURCE_KEYS.map((key) => [key, DOMAIN_LIST_SCHEMA])),
        required: SOURCE_KEYS,
        additionalProperties: false,
      },
    },
    required: ['max_messages', 'official_sources'],
    additionalProperties: false,
  },
});

export const searchModelType = defineModelType<SearchPricing, SearchCapabilities>('search', {
  pricing: { type: 'object', properties: { per_query: MONEY_SCHEMA }, required: ['per_query'], additionalProperties: false },
  capabilities: {
    type: 'object',
    properties: { max_results: { type: 'integer', minimum: 1, maximum: 50 } },
    required: ['max_results'],
    additionalProperties: false,
  },
});

export const botModelType = defineModelType<BotPricing, BotCapabilities>('bot', {
  pricing: TOKEN_PRICING_SCHEMA,
  capabilities: {
    type: 'object',
    properties: {
      tier: { type: 'string', enum: ['pro', 'basic'] },
      max_output_tokens: { type: 'integer', minimum: 1 },
      context_window: { type: 'integer', minimum: 1 },
      models: { type: 'array', items: { type: 'string', minLength: 1 } },
      upstream_model: { type: 'string', minLength: 1 },
    },
    required: ['tier', 'max_output_tokens', 'context_window', 'models'],
    additionalProperties: false,
  },
});

/** Typed views of the catalog data; the schemas above guarantee the members. */
export function agentCapabilities(model: ModelEntry): AgentCapabilities {
  return agentModelType.readCapabilities(model);
}

export function searchPricing(model: ModelEntry): SearchPricing {
  return searchModelType.readPricing(model);
}

export function searchCapabilities(model: ModelEntry): SearchCapabilities {
  return searchModelType.readCapabilities(model);
}

export function botPricing(model: ModelEntry): BotPricing {
  return botModelType.readPricing(model);
}

export function botCapabilities(model: ModelEntry): BotCapabilities {
  return botModelType.readCapabilities(model);
}
