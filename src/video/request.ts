import type { ModelEntry } from '../billing/catalog';
import { priceLine, pricingOf, type Pricing } from '../billing/money';
import { ApiError } from '../http/errors';
import { parseHttpUrl } from '../http/urls';
import { validator } from '../http/validation';
import type { VideoTaskAsk } from '../upstreams/video-task';
import { videoPricing } from './model-type';

export type ContentType = 'text' | 'image_url' | 'video_url' | 'audio_url' | 'draft_task';
export type ContentRole = 'first_frame' | 'last_frame' | 'reference_image' | 'reference_video' | 'reference_audio';

export interface ContentItem {
  type: ContentType;
  text?: string;
  image_url?: { url: string };
  video_url?: { url: string };
  audio_url?: { url: string };
  draft_task?: { id: string };
  role?: ContentRole;
}

export interface VideoRequestBody {
  model: string;
  content: ContentItem[];
  video_url_mode?: 'auto' | 'upstream' | 'tos';
  resolution?: string;
  ratio?: string;
  duration?: number;
  seed?: number;
  generate_audio?: boolean;
  draft?: boolean;
  return_last_frame?: boolean;
  camera_fixed?: boolean;
  watermark?: boolean;
  service_tier?: 'default' | 'flex';
  callback_url?: string;
  safety_identifier?: string;
}

const url = { type: 'object', properties: { url: { type: 'string', minLength: 1, maxLength: 4096 } }, required: ['url'], additionalProperties: false };

/** The request body schema: ajv enforces it and the OpenAPI document publishes it. */
export const VIDEO_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    model: { type: 'string', minLength: 1 },
    content: {
      type: 'array',
      minItems: 1,
      maxItems: 16,
      items: {
        type: 'object',
        properties: {
          type: { type: 'string', enum: ['text', 'image_url', 'video_url', 'audio_url', 'draft_task'] },
          text: { type: 'string', minLength: 1, maxLength: 4000 },
          image_url: url,
          video_url: url,
          audio_url: url,
          draft_task: { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'], additionalProperties: false },
          role: { type: 'string', enum: ['first_frame', 'last_frame', 'reference_image', 'reference_video', 'reference_audio'] },
        },
        required: ['type'],
        additionalProperties: false,
        // An `if` holds for an item without `type` unless it requires it: every rule would apply.
        allOf: [
          { if: { properties: { type: { const: 'text' } }, required: ['type'] }, then: { required: ['text'] } },
          { if: { properties: { type: { const: 'image_url' } }, required: ['type'] }, then: { required: ['image_url'] } },
          { if: { properties: { type: { const: 'video_url' } }, required: ['type'] }, then: { required: ['video_url'] } },
          { if: { properties: { type: { const: 'audio_url' } }, required: ['type'] }, then: { required: ['audio_url'] } },
          { if: { properties: { type: { const: 'draft_task' } }, required: ['type'] }, then: { required: ['draft_task'] } },
        ],
      },
    },
    video_url_mode: { type: 'string', enum: ['auto', 'upstream', 'tos'] },
    resolution: { type: 'string', enum: ['480p', '720p', '1080p', '768P', '2K'] },
    ratio: { type: 'string', enum: ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'] },
    duration: { type: 'integer', minimum: -1, maximum: 600, not: { const: 0 } },
    seed: { type: 'integer', minimum: -1, maximum: 4294967295 },
    generate_audio: { type: 'boolean' },
    draft: { type: 'boolean' },
    return_last_frame: { type: 'boolean' },
    camera_fixed: { type: 'boolean' },
    watermark: { type: 'boolean' },
    service_tier: { type: 'string', enum: ['default', 'flex'] },
    // Its form is checked after the schema, by parsing it (checkCallbackUrl): a pattern alone lets
    // through URLs that do not parse (a port above 65535, an empty host).
    callback_url: { type: 'string', minLength: 1, maxLength: 2048 },
    safety_identifier: { type: 'string', maxLength: 64 },
  },
  required: ['model', 'content'],
  additionalProperties: false,
};
const validateVideoRequest = validator<VideoRequestBody>(VIDEO_REQUEST_SCHEMA);

/** The member each content type carries, and the roles it may take (none: no role at all). */
export const CONTENT_ITEM_RULES: Readonly<Record<ContentType, { member: keyof ContentItem; roles: readonly ContentRole[] }>> = {
  text: { member: 'text', roles: [] },
  image_url: { member: 'image_url', roles: ['first_frame', 'last_frame', 'reference_image'] },
  video_url: { member: 'video_url', roles: ['reference_video'] },
  audio_url: { member: 'audio_url', roles: ['reference_audio'] },
  draft_task: { member: 'draft_task', roles: [] },
};

const MEDIA_MEMBERS = ['image_url', 'video_url', 'audio_url'] as const;

export function isDataUri(value: string): boolean {
  return /^\s*data:/i.test(value);
}

export function inlineDataRefused(param: string): ApiError {
  return bad('inline_data_not_allowed', `${param}: inline base64 data URIs are not accepted; give a public https URL or an asset:// id`, param);
}

/**
 * Inline `data:` URIs are refused by name, before the schema: a realistic base64 image is far
 * longer than a URL may be, and the length rule must not hide the real reason.
 */
function refuseInlineData(raw: unknown): void {
  if (raw === null || typeof raw !== 'object') return;
  const content = (raw as { content?: unknown }).content;
  if (!Array.isArray(content)) return;
  content.forEach((item: unknown, index) => {
    if (item === null || typeof item !== 'object') return;
    for (const member of MEDIA_MEMBERS) {
      const holder = (item as Record<string, unknown>)[member];
      const value = holder !== null && typeof holder === 'object' ? (holder as { url?: unknown }).url : undefined;
      if (typeof value === 'string' && isDataUri(value)) throw inlineDataRefused(`content[${index}].${member}.url`);
    }
  });
}

/** Each item carries only the member of its type, and only a role its type takes. */
function checkContentItems(content: readonly ContentItem[]): void {
  content.forEach((item, index) => {
    const rule = CONTENT_ITEM_RULES[item.type];
    for (const member of Object.keys(item) as (keyof ContentItem)[]) {
      if (member === 'type' || member === 'role' || member === rule.member) continue;
      throw bad('invalid_content', `content[${index}] is a ${item.type} item and cannot carry ${member}`, `content[${index}].${member}`);
    }
    if (item.role !== undefined && !rule.roles.includes(item.role)) {
      const allowed = rule.roles.length === 0 ? 'take no role' : `take the role${rule.roles.length > 1 ? 's' : ''} ${rule.roles.join(', ')}`;
      throw bad('invalid_role', `content[${index}]: ${item.type} items ${allowed}, not ${item.role}`, `content[${index}].role`);
    }
  });
}

/**
 * The request body, checked against the spec's tables: types, enums and ranges (the schema), then
 * what a schema says badly: inline data named as such, each content item's members and roles, and
 * `callback_url` parsed as an absolute http(s) URL (scheme in any case). Each failure is a 400.
 */
export function parseVideoRequest(raw: unknown): VideoRequestBody {
  refuseInlineData(raw);
  const body = validateVideoRequest(raw);
  checkContentItems(body.content);
  if (body.callback_url !== undefined && !parseHttpUrl(body.callback_url)) {
    throw new ApiError(400, 'invalid_request', 'callback_url must be an absolute http(s) URL', { param: 'callback_url' });
  }
  return body;
}

/**
 * The request as the task keeps it: every default applied, draft finals resolved. What a provider
 * is asked for (VideoTaskAsk: content, mode, resolution … draft_task) plus what only the gateway
 * keeps.
 */
export interface NormalizedVideoRequest extends Omit<VideoTaskAsk, 'model'> {
  readonly content: ContentItem[];
  readonly video_url_mode: 'auto' | 'upstream' | 'tos';
  readonly video_url_mode_explicit: boolean;
  /** Whether a reference video is part of the task (or of its draft): it selects the price table. */
  readonly has_reference_video: boolean;
  /** For a draft final: the draft task, and its upstream id the provider knows it by. */
  readonly draft_task: { id: string; upstream_id: string } | null;
  /** Seconds billed up front. */
  readonly billed_seconds: number;
  /** The provider's ids of the `asset://` images, by the gateway's asset ids (absent: none). */
  readonly asset_upstream_ids?: Readonly<Record<string, string>>;
  /** For a draft final: the channel that made the draft, the only one that knows it and is sent the task; absent: the router picks. */
  readonly upstream_channel?: string;
}

/** What the draft final step needs to know of its draft. */
export interface DraftInfo {
  readonly model: string;
  readonly status: string;
  readonly createdAt: Date;
  readonly request: NormalizedVideoRequest;
  readonly upstreamId: string | null;
  /** The channel that accepted the draft, which alone knows it; null for one accepted before tasks recorded it. */
  readonly channel: string | null;
}

function bad(code: string, message: string, param?: string): ApiError {
  return new ApiError(400, code, message, { param: param ?? null });
}

const ASSET_URI = /^asset:\/\/([A-Za-z0-9._-]+)$/;

export function isAssetUri(value: string): boolean {
  return ASSET_URI.test(value);
}

/** A verified real-person asset as a video request may use it (src/assets). */
export interface AssetRef {
  readonly status: 'processing' | 'active' | 'failed';
  /** The provider's id of the asset, which the provider knows it by. */
  readonly upstreamId: string | null;
  /** The channel (provider account) that made the asset, which alone knows it; null for one made before tasks recorded it. */
  readonly channel?: string | null;
}

/** The asset id of an `asset://<id>` image, else null. */
export function assetIdOf(item: ContentItem): string | null {
  return item.type === 'image_url' ? (ASSET_URI.exec(item.image_url?.url ?? '')?.[1] ?? null) : null;
}

/** The `asset://<id>` images of a request, by content index. */
export function assetIdsOf(content: readonly ContentItem[]): { index: number; assetId: string }[] {
  return content.flatMap((item, index) => {
    const assetId = assetIdOf(item);
    return assetId ? [{ index, assetId }] : [];
  });
}

/**
 * Each `asset://` image must name an `active` asset of the caller's account (`assets` holds the
 * caller's assets only: another account's is as unknown to it as a made-up id). Answers the provider's
 * ids of the assets, by the gateway's ids, for the submission.
 */
export function checkAssetRefs(content: readonly ContentItem[], assets: ReadonlyMap<string, AssetRef | null>): Record<string, string> {
  const upstreamIds: Record<string, string> = {};
  for (const { index, assetId } of assetIdsOf(content)) {
    const param = `content[${index}].image_url`;
    const asset = assets.get(assetId) ?? null;
    if (!asset) throw bad('invalid_asset', `${param}: asset ${assetId} not found; create it in a verified asset group (POST /v1/asset-groups/validate-session)`, param);
    if (asset.status !== 'active' || !asset.upstreamId) throw bad('asset_not_active', `${param}: asset ${assetId} is ${asset.status}; only an active asset can be used`, param);
    upstreamIds[assetId] = asset.upstreamId;
  }
  return upstreamIds;
}

/**
 * The `asset://` images of one request must all have been made through one channel (one provider
 * account's asset library): no provider account knows the assets of another. A 400 naming the first
 * that differs (the message names no channel: those are the operator's). Assets made before tasks
 * recorded their channel are not checked.
 */
export function checkAssetsOfOneChannel(content: readonly ContentItem[], assets: ReadonlyMap<string, AssetRef | null>): void {
  let first: { channel: string; param: string } | null = null;
  for (const { index, assetId } of assetIdsOf(content)) {
    const channel = assets.get(assetId)?.channel;
    if (!channel) continue;
    const param = `content[${index}].image_url`;
    if (first === null) first = { channel, param };
    else if (first.channel !== channel) {
      throw bad('assets_of_different_accounts', `${param}: asset ${assetId} was made with another provider account than the asset of ${first.param}; one video may only use assets of one provider account`, param);
    }
  }
}

/** The per-second prices by resolution that bill a request (the reference-video table when one is involved). */
function priceTable(model: ModelEntry, request: Pick<NormalizedVideoRequest, 'has_reference_video'>): Readonly<Record<string, number>> {
  const pricing = videoPricing(model);
  return (request.has_reference_video && pricing.per_second_with_reference_video) || pricing.per_second;
}

/** Seconds × the per-second price at the resolution. */
export function videoCharge(model: ModelEntry, request: Pick<NormalizedVideoRequest, 'has_reference_video'>, resolution: string, seconds: number): Pricing {
  const price = priceTable(model, request)[resolution];
  if (price === undefined) throw new Error(`${model.id} has no price at ${resolution}`);
  return pricingOf(priceLine({ seconds }, { seconds: price }));
}

/**
 * The resolution a finished video bills at: the one its provider reported, matched without regard
 * to case ("720P"), else the one requested, which the reservation priced. A report the catalog has
 * no price for would otherwise fail every try to bill.
 */
export function billedResolution(model: ModelEntry, request: Pick<NormalizedVideoRequest, 'has_reference_video' | 'resolution'>, reported: unknown): string {
  if (typeof reported !== 'string') return request.resolution;
  const priced = Object.keys(priceTable(model, request)).find((resolution) => resolution.toLowerCase() === reported.toLowerCase());
  return priced ?? request.resolution;
}
