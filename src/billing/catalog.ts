import fs from 'node:fs';
import path from 'node:path';
import type { ValidateFunction } from 'ajv';
import { ajv } from '../http/validation';
import { PACKAGE_ROOT } from '../package-root';
import { CHANNEL_NAME_PATTERN } from '../upstreams/channel-name';
import { TOKENIZER_ENCODINGS, type TokenizerEncoding } from './tokens';

/**
 * The models the gateway sells, read from a JSON data file (CATALOG_FILE, else the built-in
 * src/billing/catalog.json) and reloadable at run time. Everything that differs between models
 * (prices, limits, which request options they accept) lives here as data, so adding or repricing
 * a model is an edit of this file, never of code.
 */
export interface ModelEntry {
  readonly id: string;
  readonly type: string;
  /**
   * The channel tried first: the file's `channel`, or the first of its `channels` with the highest
   * priority. Calls tied to no provider state go through the router (src/upstreams/routing), which
   * reads `channels`; this one is the fallback of a task recorded before tasks kept their channel.
   */
  readonly channel: string;
  /**
   * The channels that serve it, highest priority first (a file's `channel: "x"` is the one route
   * `{ name: "x", priority: 0, weight: 1 }`); see CHANNELS and docs/operations.md, Routing.
   */
  readonly channels: readonly ChannelRoute[];
  readonly owned_by: string;
  /** Unix seconds, as in the OpenAI model object. */
  readonly created: number;
  readonly description?: string;
  /**
   * The BPE encoding of the model's tokenizer, for the gateway's own token counts (estimates, and
   * usage an upstream does not report); a model that names none is counted by the simple rule
   * of billing/tokens.
   */
  readonly tokenizer?: TokenizerEncoding;
  /** Prices in minor units (1 = 0.000001 CNY); the members depend on the type. */
  readonly pricing: Readonly<Record<string, unknown>>;
  readonly capabilities: Readonly<Record<string, unknown>>;
}

/** One channel of a model: a higher priority is tried first; within one priority, picked in proportion to `weight`. */
export interface ChannelRoute {
  readonly name: string;
  readonly priority: number;
  readonly weight: number;
}

export const MONEY_SCHEMA = { type: 'integer', minimum: 0 } as const;

/** Prices per million input and output tokens (chat models, bots, token-billed images). */
export interface TokenPricing {
  readonly input_per_million: number;
  readonly output_per_million: number;
}

/** The `pricing` schema of a model billed by tokens (see TokenPricing). */
export const TOKEN_PRICING_SCHEMA = {
  type: 'object',
  properties: { input_per_million: MONEY_SCHEMA, output_per_million: MONEY_SCHEMA },
  required: ['input_per_million', 'output_per_million'],
  additionalProperties: false,
} as const;

/**
 * What the catalog requires of one model type's `pricing` and `capabilities`. Each feature defines
 * its types (see defineModelType) next to the code that reads them; the composition root passes
 * them to the Catalog (src/model-types.ts lists them all). A type the catalog was not given only
 * gets the base checks.
 */
export interface ModelTypeSchemas {
  readonly pricing: object;
  readonly capabilities: object;
}

/**
 * One model type's checks, compiled once: a value handed to the Catalog, never a global
 * registration; with typed readers of a model's `pricing` and `capabilities`.
 */
export interface ModelType<Pricing = unknown, Capabilities = unknown> {
  readonly type: string;
  readonly pricing: ValidateFunction<Pricing>;
  readonly capabilities: ValidateFunction<Capabilities>;
  /**
   * A model's members as their types. Each reader checks the member against the same schema the
   * catalog checked at load (what lets the compiler know the type; ajv's compiled check of a small
   * object costs next to nothing) and throws CatalogError for a model of another type.
   */
  readPricing(model: ModelEntry): Pricing;
  readCapabilities(model: ModelEntry): Capabilities;
}

export function defineModelType<Pricing, Capabilities>(type: string, schemas: ModelTypeSchemas): ModelType<Pricing, Capabilities> {
  const pricing = ajv.compile<Pricing>(schemas.pricing);
  const capabilities = ajv.compile<Capabilities>(schemas.capabilities);
  return {
    type,
    pricing,
    capabilities,
    readPricing: (model) => conforming(pricing, model.pricing, () => `model ${model.id} pricing`),
    readCapabilities: (model) => conforming(capabilities, model.capabilities, () => `model ${model.id} capabilities`),
  };
}

function conforming<T>(validate: (value: unknown) => value is T, value: unknown, what: () => string): T {
  if (validate(value)) return value;
  throw new CatalogError(`${what()} does not match its model type`);
}

const validateFile = ajv.compile({
  type: 'object',
  properties: {
    models: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$' },
          type: { type: 'string', minLength: 1 },
          channel: { type: 'string', pattern: CHANNEL_NAME_PATTERN },
          channels: {
            type: 'array',
            minItems: 1,
            maxItems: 32,
            items: {
              type: 'object',
              properties: {
                name: { type: 'string', pattern: CHANNEL_NAME_PATTERN },
                priority: { type: 'integer', minimum: -1000, maximum: 1000 },
                weight: { type: 'integer', minimum: 1, maximum: 1000 },
              },
              required: ['name'],
              additionalProperties: false,
            },
          },
          owned_by: { type: 'string' },
          created: { type: 'integer', minimum: 0 },
          description: { type: 'string' },
          tokenizer: { enum: TOKENIZER_ENCODINGS },
          pricing: { type: 'object' },
          capabilities: { type: 'object' },
        },
        required: ['id', 'type', 'owned_by', 'created', 'pricing', 'capabilities'],
        // One way of naming the channels: `channel` (the one-channel case) or `channels`.
        oneOf: [{ required: ['channel'] }, { required: ['channels'] }],
        additionalProperties: false,
      },
    },
  },
  required: ['models'],
  additionalProperties: false,
});

export class CatalogError extends Error {
  override readonly name = 'CatalogError';
}

/**
 * The catalog beside this module's source, also when the gateway runs its build (dist/): a reload
 * re-reads the file an operator edits, never a copy the build made.
 */
export const DEFAULT_CATALOG_FILE = path.join(PACKAGE_ROOT, 'src', 'billing', 'catalog.json');

/**
 * Whether a model can be served now: some of its channels are configured and speak a protocol that
 * serves its type, and those speak one protocol (Upstreams.protocolOf).
 */
export type ServedCheck = (model: ModelEntry) => boolean;

/**
 * The one check a catalog must pass, at start-up and on every reload: the document's schema,
 * unique ids, each type's `pricing` and `capabilities`. Throws CatalogError naming the first
 * problem. (A model whose channel is not configured is valid but unavailable: see Catalog.)
 */
export function validateCatalog(doc: unknown, source: string, modelTypes: readonly ModelType[]): ModelEntry[] {
  if (!validateFile(doc)) {
    const e = validateFile.errors![0]!;
    throw new CatalogError(`${source}: ${e.instancePath || '/'} ${e.message ?? 'is invalid'}`);
  }
  const models = (doc as { models: CatalogFileEntry[] }).models.map(withRoutes);
  const typeValidators = new Map(modelTypes.map((t) => [t.type, t]));
  const seen = new Set<string>();
  for (const m of models) {
    if (seen.has(m.id)) throw new CatalogError(`${source}: model ${m.id} is listed twice`);
    seen.add(m.id);
    const names = new Set(m.channels.map((c) => c.name));
    if (names.size !== m.channels.length) throw new CatalogError(`${source}: model ${m.id} lists a channel twice`);
    const v = typeValidators.get(m.type);
    if (v && !v.pricing(m.pricing)) throw new CatalogError(`${source}: model ${m.id} pricing${v.pricing.errors![0]!.instancePath} ${v.pricing.errors![0]!.message}`);
    if (v && !v.capabilities(m.capabilities)) {
      throw new CatalogError(`${source}: model ${m.id} capabilities${v.capabilities.errors![0]!.instancePath} ${v.capabilities.errors![0]!.message}`);
    }
  }
  return models;
}

/** A model as the file spells it: `channel` or `channels`, as the schema allows. */
export type CatalogFileEntry = Omit<ModelEntry, 'channel' | 'channels'> & { channel?: string; channels?: { name: string; priority?: number; weight?: number }[] };

/** The model with its routes in trying order (stable: equal priorities keep the file's order), and its first channel. */
function withRoutes(model: CatalogFileEntry): ModelEntry {
  const listed = model.channels ?? [{ name: model.channel! }];
  const channels = listed.map((c) => ({ name: c.name, priority: c.priority ?? 0, weight: c.weight ?? 1 })).sort((a, b) => b.priority - a.priority);
  return { ...model, channel: channels[0]!.name, channels };
}

/** Parses a catalog file's text and checks it with validateCatalog. */
export function parseCatalog(text: string, source: string, modelTypes: readonly ModelType[]): ModelEntry[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CatalogError(`${source}: not JSON (${(err as Error).message})`);
  }
  return validateCatalog(doc, source, modelTypes);
}

/**
 * The models the gateway sells. A model none of whose channels is configured (CHANNELS names only
 * some of the catalog's channels) is unavailable: `get` and `list` do not see it, so a request for it is
 * a 400 `model_not_found` and nothing is charged. So is a model whose channels speak different
 * protocols: a feature chooses its adapter by the model's protocol before the router picks a channel. It is never served by anything else: a real
 * deployment that forgot a channel must not sell simulated answers.
 */
export class Catalog {
  private models: ReadonlyMap<string, ModelEntry>;
  private isServable: ServedCheck = () => true;

  /** `modelTypes`: the checks of each model type's `pricing` and `capabilities`, at start and on reload. */
  constructor(
    private readonly file: string,
    private readonly modelTypes: readonly ModelType[],
  ) {
    this.models = toMap(parseCatalog(fs.readFileSync(file, 'utf8'), file, modelTypes));
  }

  /** Binds the catalog to the upstream channels once they are known (Upstreams.start). */
  bindChannels(isServable: ServedCheck): void {
    this.isServable = isServable;
  }

  /**
   * Re-reads the file and checks it exactly as at start-up (validateCatalog); on any error the
   * current catalog stays in force and a CatalogError is thrown. Answers how many models are
   * available and which are not (their channel is not configured).
   */
  reload(): { models: number; unavailable: string[] } {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      throw new CatalogError(`${this.file}: ${(err as Error).message}`);
    }
    this.models = toMap(parseCatalog(text, this.file, this.modelTypes));
    return { models: this.list().length, unavailable: this.unavailable().map((m) => m.id) };
  }

  get(id: string): ModelEntry | undefined {
    const model = this.models.get(id);
    return model && this.isServed(model) ? model : undefined;
  }

  list(type?: string): ModelEntry[] {
    return [...this.models.values()].filter((m) => (type === undefined || m.type === type) && this.isServed(m));
  }

  /** Models of the file none of whose channels is configured and speaks a protocol that serves them, or whose channels speak several protocols: not sold. */
  unavailable(): ModelEntry[] {
    return [...this.models.values()].filter((m) => !this.isServed(m));
  }

  /** A model is sold while at least one of its channels is configured and can serve its type, all such in one protocol. */
  private isServed(model: ModelEntry): boolean {
    return this.isServable(model);
  }

  /** Every model of the file, available or not. */
  all(): ModelEntry[] {
    return [...this.models.values()];
  }

  /** Every channel the file names, configured or not. */
  channels(): Set<string> {
    return new Set([...this.models.values()].flatMap((m) => m.channels.map((c) => c.name)));
  }
}

function toMap(models: readonly ModelEntry[]): ReadonlyMap<string, ModelEntry> {
  return new Map(models.map((m) => [m.id, m]));
}

