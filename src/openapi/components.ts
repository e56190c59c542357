import type { ErrorShape, Schema } from './types';

/**
 * Schemas of answers the gateway writes itself (no handler validates them, so they are stated
 * here, loosely: the members clients rely on, more may appear) and the three error shapes.
 */
const str = { type: 'string' } as const;
const int = { type: 'integer' } as const;
const nullableStr = { type: ['string', 'null'] } as const;

export const ERROR_SCHEMAS: Readonly<Record<ErrorShape, { readonly name: string; readonly schema: Schema }>> = {
  openai: {
    name: 'OpenAIError',
    schema: {
      type: 'object',
      description: 'OpenAI-style error, used by every endpoint except risk and minutes.',
      properties: {
        error: {
          type: 'object',
          properties: { message: str, type: str, param: nullableStr, code: str },
          required: ['message', 'type', 'param', 'code'],
        },
      },
      required: ['error'],
    },
  },
  risk: {
    name: 'RiskError',
    schema: {
      type: 'object',
      description: 'Shape A (risk endpoint).',
      properties: { error: { type: 'object', properties: { message: str, code: str }, required: ['message', 'code'] }, request_id: str },
      required: ['error', 'request_id'],
    },
  },
  minutes: {
    name: 'MinutesError',
    schema: {
      type: 'object',
      description: 'Shape B (minutes endpoints): `type` is `auth_error` for 401, `invalid_request_error` for a bad request.',
      properties: { error: str, type: str },
      required: ['error', 'type'],
    },
  },
};

interface ErrorStatus {
  readonly description: string;
  /** A typical error of the status, for the examples. */
  readonly code: string;
  readonly type: string;
  readonly message: string;
}

/** What each error status means at this gateway, with a typical error (types as src/http/errors.ts gives them). */
export const ERROR_STATUSES: Readonly<Record<number, ErrorStatus>> = {
  400: { description: 'Bad request: invalid body, query or model, or refused by the upstream.', code: 'invalid_request', type: 'invalid_request_error', message: 'model is required' },
  401: { description: 'Missing or invalid credential.', code: 'invalid_api_key', type: 'authentication_error', message: 'invalid or missing API key' },
  402: { description: 'Insufficient balance.', code: 'insufficient_balance', type: 'insufficient_balance', message: 'insufficient balance' },
  403: { description: 'The API key may not use this model.', code: 'model_not_allowed', type: 'permission_error', message: "this API key may not use the model 'chat-pro'" },
  404: { description: 'Not found, or not the caller’s.', code: 'task_not_found', type: 'not_found_error', message: 'task tsk_123 not found' },
  409: { description: 'Conflict with the resource’s state.', code: 'task_finished', type: 'conflict_error', message: 'task tsk_123 is finished; only an unfinished task can be cancelled' },
  413: { description: 'Request body too large.', code: 'payload_too_large', type: 'invalid_request_error', message: 'request body exceeds 5242880 bytes' },
  415: { description: 'Unsupported media type.', code: 'unsupported_media_type', type: 'invalid_request_error', message: 'an upload is multipart/form-data with a boundary' },
  429: {
    description: 'Too many requests (rate limit, polling too fast, credential lockout, or an idempotent request in progress).',
    code: 'rate_limit_exceeded',
    type: 'rate_limit_error',
    message: 'rate limit of 60 requests per minute exceeded for this key',
  },
  502: { description: 'Upstream failure.', code: 'upstream_error', type: 'upstream_error', message: 'upstream: bad gateway' },
};

/** The example body of an error status in a shape, as src/http/errors.ts renders it. */
export function errorExample(shape: ErrorShape, status: number): unknown {
  const { code, type, message } = ERROR_STATUSES[status]!;
  if (shape === 'risk') return { error: { message, code }, request_id: 'req_0123456789abcdef' };
  if (shape === 'minutes') return { error: message, type: status === 401 ? 'auth_error' : 'invalid_request_error' };
  return { error: { message, type, param: null, code } };
}

const taskBase = {
  type: 'object',
  properties: { id: str, object: str, model: str, status: { type: 'string', description: '`queued`, `running`, `succeeded`, `failed` or `cancelled`.' } },
  required: ['id', 'status'],
} as const;

const listOf = (item: Schema): Schema => ({
  type: 'object',
  properties: { object: { const: 'list' }, data: { type: 'array', items: item }, has_more: { type: 'boolean' }, next_after: nullableStr },
  required: ['object', 'data', 'has_more', 'next_after'],
});

/** A list envelope with more members beside the page. */
const withMembers = (list: Schema, members: Record<string, Schema>): Schema => ({ ...list, properties: { ...(list.properties as Record<string, Schema>), ...members } });

const ledgerEntry = {
  type: 'object',
  properties: { sequence: int, type: str, amount: int, available_after: int, frozen_after: int, reference: nullableStr, created_at: str },
} as const;

/** Response schemas by component name; operations refer to them by name. */
export const RESPONSE_SCHEMAS: Readonly<Record<string, Schema>> = {
  Status: { type: 'object', properties: { status: str, reason: str }, required: ['status'] },
  Account: {
    type: 'object',
    properties: { id: str, name: str, available: int, frozen: int, currency: str, default_video_url_mode: str, created_at: str },
    required: ['id', 'available', 'frozen'],
  },
  LedgerEntry: ledgerEntry,
  LedgerPage: listOf({ $ref: '#/components/schemas/LedgerEntry' }),
  ApiKey: { type: 'object', properties: { id: str, key: { type: 'string', description: 'Shown once; starts with `tr-`.' }, name: nullableStr, allowed_models: { type: ['array', 'null'], items: str } } },
  WebhookSecret: { type: 'object', properties: { secret: { type: ['string', 'null'], description: 'Starts with `whsec_`.' } }, required: ['secret'] },
  List: { type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: { type: 'object' } } }, required: ['object', 'data'] },
  Model: { type: 'object', properties: { id: str, object: { const: 'model' }, type: str, owned_by: str }, required: ['id', 'object'] },
  ModelList: { type: 'object', properties: { object: { const: 'list' }, data: { type: 'array', items: { $ref: '#/components/schemas/Model' } } }, required: ['object', 'data'] },
  ChatCompletion: {
    type: 'object',
    properties: {
      id: str,
      object: { const: 'chat.completion' },
      created: int,
      model: str,
      choices: { type: 'array', items: { type: 'object', properties: { index: int, message: { type: 'object', properties: { role: str, content: nullableStr } }, finish_reason: nullableStr } } },
      usage: { type: 'object', properties: { prompt_tokens: int, completion_tokens: int, total_tokens: int } },
    },
    required: ['id', 'object', 'choices'],
  },
  Response: { type: 'object', properties: { id: str, object: { const: 'response' }, status: str, model: str, output: { type: 'array', items: { type: 'object' } }, usage: { type: 'object' } }, required: ['id', 'object'] },
  RiskResult: { type: 'object', description: 'The risk screening result (see the interface spec, Resources).', properties: { id: str, object: str, identity_status: str } },
  ImageGeneration: { type: 'object', properties: { created: int, data: { type: 'array', items: { type: 'object', properties: { url: str, b64_json: str } } }, usage: { type: 'object' } }, required: ['created', 'data'] },
  Task: taskBase,
  TaskList: listOf({ $ref: '#/components/schemas/Task' }),
  TaskSummary: {
    type: 'object',
    description: 'An item of GET /v1/tasks: what every task has, and `detail`, the task as its kind’s status endpoint answers it (null for a kind this gateway does not serve).',
    properties: {
      object: { const: 'task' },
      id: str,
      kind: { type: 'string', description: '`video`, `minutes`, `summary`, `image` (async), `podcast`, `erase` (subtitle erase), `asset` or `asset_session` (asset verification).' },
      model: str,
      status: taskBase.properties.status,
      created_at: str,
      updated_at: str,
      finished_at: nullableStr,
      billing: {
        type: 'object',
        properties: {
          currency: { const: 'CNY' },
          reserved: { type: 'integer', description: 'Minor units frozen when the task was created.' },
          status: { type: 'string', description: '`reserved` until the task is billed, then `settled` or `released`.' },
          amount: { type: ['integer', 'null'], description: 'Minor units charged once billed (0 when released).' },
          refunded: { type: 'integer', description: 'Minor units of `amount` refunded since (0: none); from the ledger view.' },
        },
        required: ['currency', 'reserved', 'status', 'amount', 'refunded'],
      },
      error: { type: ['object', 'null'], properties: { code: str, message: str } },
      detail: { type: ['object', 'null'] },
    },
    required: ['object', 'id', 'kind', 'model', 'status', 'created_at', 'updated_at', 'finished_at', 'billing', 'error', 'detail'],
  },
  TaskSummaryList: listOf({ $ref: '#/components/schemas/TaskSummary' }),
  WebhookDelivery: {
    type: 'object',
    properties: {
      object: { const: 'webhook.delivery' },
      id: str,
      reason: { type: 'string', description: '`finished` (the task finished) or `redeliver` (asked for again).' },
      status: { type: 'string', description: '`pending`, `delivered` or `dropped` (every attempt failed).' },
      requested_at: str,
      attempts: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            attempt: int,
            at: str,
            ok: { type: 'boolean' },
            status_code: { type: ['integer', 'null'] },
            error: nullableStr,
            duration_ms: int,
            timestamp: { type: ['integer', 'null'], description: 'The X-Service-Timestamp value sent.' },
            signature: { type: ['string', 'null'], description: 'The X-Service-Signature value sent; null when unsigned.' },
          },
          required: ['attempt', 'at', 'ok', 'status_code', 'error', 'duration_ms', 'timestamp', 'signature'],
        },
      },
    },
    required: ['object', 'id', 'reason', 'status', 'requested_at', 'attempts'],
  },
  WebhookDeliveryList: withMembers(listOf({ $ref: '#/components/schemas/WebhookDelivery' }), { callback_url: nullableStr, signed: { type: 'boolean' } }),
  CatalogList: {
    type: 'object',
    properties: {
      object: { const: 'list' },
      data: {
        type: 'array',
        items: {
          type: 'object',
          description:
            'A catalog model as the file states it (pricing in minor units), with `available`; `channel` is the channel tried first and `channels` every channel that serves it, highest priority first (a file\'s `channel` is one route of priority 0, weight 1).',
          properties: {
            id: str,
            type: str,
            channel: str,
            channels: {
              type: 'array',
              items: { type: 'object', properties: { name: str, priority: int, weight: int }, required: ['name', 'priority', 'weight'] },
            },
            owned_by: str, created: int,
            pricing: { type: 'object' },
            capabilities: { type: 'object' },
            available: { type: 'boolean' },
          },
          required: ['id', 'type', 'channel', 'channels', 'pricing', 'capabilities', 'available'],
        },
      },
    },
    required: ['object', 'data'],
  },
  DroppedWebhookList: listOf({
    allOf: [
      { $ref: '#/components/schemas/WebhookDelivery' },
      { type: 'object', properties: { task_id: str, kind: str, account_id: str, callback_url: nullableStr }, required: ['task_id', 'kind', 'account_id', 'callback_url'] },
    ],
  }),
  AuditRun: {
    type: 'object',
    properties: {
      object: { const: 'audit.run' },
      id: str,
      status: { type: 'string', description: '`running`, `passed`, `failed` (mismatches or invariant violations), `error` (could not finish) or `abandoned` (its process stopped).' },
      started_at: str,
      finished_at: nullableStr,
      duration_ms: { type: ['integer', 'null'] },
      report: {
        type: ['object', 'null'],
        description: 'The report `npm run audit` prints, once finished.',
        properties: {
          ok: { type: 'boolean' },
          eventsInLog: int,
          head: nullableStr,
          mismatches: { type: 'array', items: str },
          invariantViolations: { type: 'array', items: str },
          lagging: { type: 'array', items: str },
          staleReservations: { type: 'array', items: { type: 'object' } },
        },
      },
      error: nullableStr,
    },
    required: ['object', 'id', 'status', 'started_at', 'finished_at', 'duration_ms', 'report', 'error'],
  },
  AuditStatus: {
    type: 'object',
    properties: {
      object: { const: 'audit' },
      running: { oneOf: [{ $ref: '#/components/schemas/AuditRun' }, { type: 'null' }] },
      last: { oneOf: [{ $ref: '#/components/schemas/AuditRun' }, { type: 'null' }] },
    },
    required: ['object', 'running', 'last'],
  },
  MinutesTask: { ...taskBase, description: 'Minutes task (see the interface spec, Resources); `report` is version 2.', properties: { ...taskBase.properties, status: { type: 'string', description: '`processing` until finished, then `succeeded` or `failed`.' }, report: { type: 'object' } } },
  MinutesTaskList: listOf({ $ref: '#/components/schemas/MinutesTask' }),
  File: { type: 'object', properties: { id: str, object: { const: 'file' }, bytes: int, filename: str, purpose: str, created_at: int }, required: ['id', 'object'] },
  FileList: listOf({ $ref: '#/components/schemas/File' }),
  AssetGroup: { type: 'object', properties: { group_id: str, status: str } },
  Asset: { type: 'object', properties: { asset_id: str, status: str, url: str } },
  AssetList: listOf({ $ref: '#/components/schemas/Asset' }),
  VerificationSession: { type: 'object', properties: { session_id: str, group_id: str, status: str } },
  RequestLogLine: {
    type: 'object',
    description: 'One reserved call (src/http/routes/request-log.ts). `channel` is on the admin route only.',
    properties: {
      object: { const: 'request' },
      reservation_id: str,
      reserved_at: str,
      closed_at: nullableStr,
      account_id: str,
      account_name: nullableStr,
      key_id: nullableStr,
      key_name: nullableStr,
      actor: { type: 'string', description: 'The API key id, `admin` or `system`.' },
      model: str,
      endpoint: str,
      channel: { type: ['string', 'null'], description: 'The channel that served the main call (admin route only); null until settled, and on charges no channel served.' },
      units: { type: ['object', 'null'], additionalProperties: int, description: 'Quantities per unit name, from the settlement’s pricing; null until settled.' },
      reserved: int,
      amount: { type: ['integer', 'null'], description: 'What was charged; null unless settled.' },
      refunded: int,
      outcome: { type: 'string', enum: ['open', 'settled', 'released', 'refunded'], description: '`refunded`: settled, then (partly) refunded.' },
      reason: { type: ['string', 'null'], description: 'Why a released call was released.' },
      request_id: nullableStr,
      task_id: nullableStr,
    },
    required: ['object', 'reservation_id', 'reserved_at', 'closed_at', 'account_id', 'key_id', 'model', 'endpoint', 'units', 'reserved', 'amount', 'refunded', 'outcome', 'request_id', 'task_id'],
  },
  RequestLogPage: listOf({ $ref: '#/components/schemas/RequestLogLine' }),
  KeyListing: {
    type: 'object',
    description: 'A key in the operator’s list: never its secret or hash.',
    properties: {
      id: str,
      name: nullableStr,
      prefix: { type: 'string', description: 'The first characters of the key (`tr-` and six more).' },
      status: { type: 'string', enum: ['active', 'expired', 'revoked'] },
      account_id: str,
      account_name: nullableStr,
      spent: { type: 'integer', description: 'Charged less refunded over the key’s life, minor units.' },
      budget: { type: ['object', 'null'] },
      allowed_models: { type: ['array', 'null'], items: str },
      expires_at: nullableStr,
      created_at: str,
      last_used_at: nullableStr,
      revoked_at: nullableStr,
    },
    required: ['id', 'name', 'prefix', 'status', 'account_id', 'account_name', 'spent', 'created_at', 'last_used_at'],
    additionalProperties: false,
  },
  KeyListingPage: listOf({ $ref: '#/components/schemas/KeyListing' }),
};
