/**
 * How one route is documented. The document builder turns these into OpenAPI 3.1 operations:
 * path parameters come from the route pattern, security from the path (/admin → admin token,
 * /v1 → API key, anything else public), error responses from `errors` in `errorShape`.
 */
export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** The key of a route: its method and its path pattern exactly as the router registers it. */
export type RouteKey = `${Method} /${string}`;

/** Error bodies: OpenAI style, shape A (risk), shape B (minutes); see the interface spec. */
export type ErrorShape = 'openai' | 'risk' | 'minutes';

/** A JSON Schema (2020-12, as OpenAPI 3.1 uses; the ajv request schemas are valid ones). */
export type Schema = Readonly<Record<string, unknown>>;

export interface QueryParam {
  readonly name: string;
  readonly description: string;
  readonly schema: Schema;
}

export interface SuccessResponse {
  readonly status: number;
  readonly description: string;
  /** A component name (see components.ts) or an inline schema; none for an empty body. */
  readonly schema?: string | Schema;
  readonly example?: unknown;
  /** Default application/json. */
  readonly contentType?: string;
}

export interface OperationDoc {
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  /** Descriptions of the path parameters, by name (each `:name` of the pattern needs one). */
  readonly pathParams?: Readonly<Record<string, string>>;
  readonly query?: readonly QueryParam[];
  /** Honours an `Idempotency-Key` header. */
  readonly idempotent?: boolean;
  /**
   * The JSON body: the ajv schema the handler validates with, published under `name`, and the
   * component schemas its `#/components/schemas/<name>` references name (published beside it).
   */
  readonly body?: { readonly name: string; readonly schema: Schema; readonly example: unknown; readonly components?: Readonly<Record<string, Schema>> };
  /** A multipart/form-data body (uploads), documented by hand since busboy, not ajv, reads it. */
  readonly multipart?: Schema;
  readonly responses: readonly SuccessResponse[];
  /** With `stream: true` the success answer is `text/event-stream` instead (described here). */
  readonly stream?: string;
  /** The error statuses it answers: the spec's list for its endpoint group, or what the code answers. */
  readonly errors: readonly number[];
  /** Default `openai`. */
  readonly errorShape?: ErrorShape;
}

export type OperationDocs = Readonly<Partial<Record<RouteKey, OperationDoc>>>;
