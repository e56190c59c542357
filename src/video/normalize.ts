import type { ModelEntry } from '../billing/catalog';
import { ApiError } from '../http/errors';
import { clientUrlProblem } from '../http/urls';
import { videoCapabilities, type VideoCapabilities } from './model-type';
import { isAssetUri, isDataUri, inlineDataRefused, type ContentItem, type DraftInfo, type NormalizedVideoRequest, type VideoRequestBody } from './request';

/**
 * The video rules of the interface specification (POST /v1/videos/generations), one named check
 * each, all driven by the model's capabilities, never its id. `normalizeVideoRequest` runs them in
 * the table's order (so the first rule a request breaks is the one its 400 names), then applies the
 * spec's defaults.
 */

export const DRAFT_VALIDITY_MS = 7 * 24 * 3_600_000;

function bad(code: string, message: string, param?: string): ApiError {
  return new ApiError(400, code, message, { param: param ?? null });
}

/** What the rules read: the request with its content sorted by what each item is for, and its defaults. */
interface VideoFacts {
  readonly model: ModelEntry;
  readonly caps: VideoCapabilities;
  readonly body: VideoRequestBody;
  readonly draft: DraftInfo | null;
  readonly now: Date;
  /** FILE_URL_ALLOW_PRIVATE_TARGETS: media URLs may name private hosts. */
  readonly allowPrivateTargets: boolean;
  readonly drafts: readonly ContentItem[];
  readonly texts: readonly ContentItem[];
  readonly firstFrames: readonly ContentItem[];
  readonly lastFrames: readonly ContentItem[];
  /** Reference images, and every video_url and audio_url item. */
  readonly references: readonly ContentItem[];
  readonly media: readonly ContentItem[];
  readonly resolution: string;
  readonly duration: number;
  readonly ratio: string;
  readonly draftPreview: boolean;
}

/** One spec rule: which requests it applies to, and the 400 of a request that breaks it (null: kept). */
interface VideoRule {
  readonly name: string;
  readonly applies: 'every_request' | 'draft_final' | 'generation';
  violation(f: VideoFacts): ApiError | null;
}

const frameCount = (f: VideoFacts) => f.firstFrames.length + f.lastFrames.length;
const draftParam = 'content[0].draft_task.id';
const draftId = (f: VideoFacts) => f.drafts[0]!.draft_task!.id;

function mediaUrlOf(item: ContentItem): string | null {
  return item.image_url?.url ?? item.video_url?.url ?? item.audio_url?.url ?? null;
}

function mediaViolation(item: ContentItem, index: number, allowPrivateTargets: boolean): ApiError | null {
  const mediaUrl = mediaUrlOf(item);
  if (mediaUrl === null) return null;
  const param = `content[${index}].${item.type}.url`;
  if (isDataUri(mediaUrl)) return inlineDataRefused(param);
  if (item.type === 'image_url' && isAssetUri(mediaUrl)) return null;
  const problem = clientUrlProblem(mediaUrl, param, { httpsOnly: true, allowPrivateTargets, ...(item.type === 'image_url' ? { alternative: 'asset://<id>' } : {}) });
  return problem ? bad('invalid_media_url', problem, param) : null;
}

export const VIDEO_RULES: readonly VideoRule[] = [
  {
    name: 'media are publicly reachable https URLs (the address rule of every client URL) or asset:// references, never inline data',
    applies: 'every_request',
    violation: (f) => f.body.content.map((item, i) => mediaViolation(item, i, f.allowPrivateTargets)).find((v) => v !== null) ?? null,
  },
  {
    // The asset library is Ark's: a model whose provider cannot fetch its assets would take the
    // money and then fail at submission, so the request is refused before anything is reserved.
    name: 'asset:// images only on models whose provider holds the asset library (not the H3 class)',
    applies: 'every_request',
    violation(f) {
      if (f.caps.asset_images) return null;
      const index = f.body.content.findIndex((item) => item.type === 'image_url' && isAssetUri(item.image_url?.url ?? ''));
      return index === -1 ? null : bad('asset_images_not_supported', `${f.model.id} does not take asset:// images: its provider cannot fetch the asset library`, `content[${index}].image_url.url`);
    },
  },
  {
    name: 'idle enhanced models reject video_url_mode upstream',
    applies: 'every_request',
    violation: (f) => (f.body.video_url_mode === 'upstream' && !f.caps.upstream_url_mode ? bad('unsupported_video_url_mode', `${f.model.id} does not support video_url_mode upstream`, 'video_url_mode') : null),
  },
  // --- draft mode, the final step ------------------------------------------------------------
  {
    name: 'draft mode is for draft-capable models only',
    applies: 'draft_final',
    violation: (f) => (f.caps.draft ? null : bad('draft_not_supported', `${f.model.id} does not support the draft flow`, 'content')),
  },
  {
    name: 'the final step sends only a draft_task item',
    applies: 'draft_final',
    violation: (f) => (f.body.content.length === 1 ? null : bad('invalid_draft_final', 'the draft final step carries exactly one draft_task item and nothing else', 'content')),
  },
  {
    name: 'the final step does not resend duration, ratio, seed, generate_audio, draft or resolution',
    applies: 'draft_final',
    violation(f) {
      const resent = (['duration', 'ratio', 'seed', 'generate_audio', 'draft', 'resolution'] as const).find((field) => f.body[field] !== undefined);
      return resent ? bad('invalid_draft_final', `the draft final step does not resend ${resent}: it comes from the draft`, resent) : null;
    },
  },
  {
    name: 'the draft task exists (the caller\'s own)',
    applies: 'draft_final',
    violation: (f) => (f.draft ? null : bad('invalid_draft_task', `draft task ${draftId(f)} not found`, draftParam)),
  },
  {
    name: 'the draft task is a draft',
    applies: 'draft_final',
    violation: (f) => (f.draft!.request.draft ? null : bad('invalid_draft_task', `task ${draftId(f)} is not a draft`, draftParam)),
  },
  {
    name: 'the final step uses the draft\'s model',
    applies: 'draft_final',
    violation: (f) => (f.draft!.model === f.model.id ? null : bad('invalid_draft_task', `draft task ${draftId(f)} was made with ${f.draft!.model}`, draftParam)),
  },
  {
    name: 'the draft task succeeded',
    applies: 'draft_final',
    violation: (f) => (f.draft!.status === 'succeeded' && f.draft!.upstreamId ? null : bad('invalid_draft_task', `draft task ${draftId(f)} has not succeeded`, draftParam)),
  },
  {
    name: 'the draft task is at most 7 days old',
    applies: 'draft_final',
    violation: (f) => (f.now.getTime() - f.draft!.createdAt.getTime() <= DRAFT_VALIDITY_MS ? null : bad('invalid_draft_task', `draft task ${draftId(f)} is older than 7 days`, draftParam)),
  },
  // --- a generation: text, frames or references --------------------------------------------
  {
    // Without audio, `false` asks for nothing the model cannot do; only a model that does not take
    // the field at all (the H3 class) refuses it whatever its value.
    name: 'generate_audio only on audio-enabled models; the H3 class does not take the field',
    applies: 'generation',
    violation(f) {
      if (f.body.generate_audio === undefined || f.caps.audio) return null;
      if (!f.caps.accepts_audio_off) return bad('unsupported_parameter', `${f.model.id} does not support generate_audio`, 'generate_audio');
      return f.body.generate_audio ? bad('unsupported_parameter', `${f.model.id} does not generate audio: generate_audio must be false or omitted`, 'generate_audio') : null;
    },
  },
  {
    name: 'text-to-video: a single text item',
    applies: 'generation',
    violation: (f) => (f.texts.length > 1 ? bad('invalid_content', 'at most one text item (the prompt) is accepted', 'content') : null),
  },
  {
    name: 'image-to-video: first/last frames on frame-capable models',
    applies: 'generation',
    violation: (f) => (frameCount(f) > 0 && !f.caps.frame_inputs ? bad('frames_not_supported', `${f.model.id} does not accept first/last frame images`, 'content') : null),
  },
  {
    name: 'image-to-video: a last_frame only with a first_frame',
    applies: 'generation',
    violation: (f) => (f.lastFrames.length > 0 && f.firstFrames.length !== 1 ? bad('invalid_frames', 'a last_frame image needs exactly one first_frame image', 'content') : null),
  },
  {
    name: 'image-to-video: one first_frame and optionally one last_frame',
    applies: 'generation',
    violation: (f) => (f.firstFrames.length > 1 || f.lastFrames.length > 1 ? bad('invalid_frames', 'at most one first_frame and one last_frame image', 'content') : null),
  },
  {
    name: 'multi-modal reference: reference-capable models only',
    applies: 'generation',
    violation: (f) => (f.references.length > 0 && !f.caps.reference_assets ? bad('references_not_supported', `${f.model.id} does not accept reference assets`, 'content') : null),
  },
  {
    name: 'video_url and audio_url items are for the reference-capable model only',
    applies: 'generation',
    violation: (f) =>
      f.media.length > 0 && !f.caps.reference_media ? bad('reference_media_not_supported', `video_url and audio_url items need a reference-capable model; ${f.model.id} is not one`, 'content') : null,
  },
  {
    name: 'H3 class: first/last frames cannot be mixed with reference assets',
    applies: 'generation',
    violation: (f) =>
      frameCount(f) > 0 && f.references.length > 0 && !f.caps.mix_frames_and_references
        ? bad('frames_with_references', `${f.model.id} does not mix first/last frames with reference assets`, 'content')
        : null,
  },
  {
    name: 'an input mode: a text prompt, frame images or reference assets',
    applies: 'generation',
    violation: (f) => (f.texts.length === 0 && frameCount(f) === 0 && f.references.length === 0 ? bad('invalid_content', 'content needs a text prompt, frame images or reference assets', 'content') : null),
  },
  {
    name: 'resolution among the model\'s (H3 class: 768P or 2K)',
    applies: 'generation',
    violation: (f) => (f.caps.resolutions.includes(f.resolution) ? null : bad('unsupported_resolution', `${f.model.id} supports resolution ${f.caps.resolutions.join(', ')}`, 'resolution')),
  },
  {
    name: 'draft mode is for draft-capable models only (draft: true)',
    applies: 'generation',
    violation: (f) => (f.draftPreview && !f.caps.draft ? bad('draft_not_supported', `${f.model.id} does not support draft`, 'draft') : null),
  },
  {
    name: 'a draft renders a 480p preview',
    applies: 'generation',
    violation: (f) => (f.draftPreview && f.body.resolution !== undefined && f.body.resolution !== '480p' ? bad('invalid_draft', 'a draft renders a 480p preview', 'resolution') : null),
  },
  {
    name: 'duration -1 (the model chooses) only where the model can',
    applies: 'generation',
    violation: (f) =>
      f.duration === -1 && !f.caps.durations.auto ? bad('unsupported_duration', `${f.model.id} needs an explicit duration from ${f.caps.durations.min} to ${f.caps.durations.max}`, 'duration') : null,
  },
  {
    name: 'duration within the model\'s range (H3 class: 4 to 15)',
    applies: 'generation',
    violation: (f) =>
      f.duration !== -1 && (f.duration < f.caps.durations.min || f.duration > f.caps.durations.max)
        ? bad('unsupported_duration', `${f.model.id} takes a duration from ${f.caps.durations.min} to ${f.caps.durations.max} seconds`, 'duration')
        : null,
  },
  {
    name: 'H3 class: text-to-video needs a concrete ratio, not adaptive',
    applies: 'generation',
    violation: (f) =>
      inputMode(f) === 'text' && f.caps.text_to_video_requires_ratio && f.ratio === 'adaptive'
        ? bad('ratio_required', `text-to-video with ${f.model.id} needs a concrete ratio, not adaptive`, 'ratio')
        : null,
  },
];

function inputMode(f: VideoFacts): 'text' | 'frames' | 'references' {
  return f.references.length > 0 ? 'references' : frameCount(f) > 0 ? 'frames' : 'text';
}

function factsOf(model: ModelEntry, body: VideoRequestBody, context: { draft: DraftInfo | null; now: Date; allowPrivateTargets: boolean }): VideoFacts {
  const caps = videoCapabilities(model);
  const frames = body.content.filter((c) => c.type === 'image_url' && (c.role === undefined || c.role === 'first_frame' || c.role === 'last_frame'));
  return {
    model,
    caps,
    body,
    ...context,
    drafts: body.content.filter((c) => c.type === 'draft_task'),
    texts: body.content.filter((c) => c.type === 'text'),
    firstFrames: frames.filter((c) => c.role !== 'last_frame'),
    lastFrames: frames.filter((c) => c.role === 'last_frame'),
    references: body.content.filter((c) => c.role?.startsWith('reference_') || c.type === 'video_url' || c.type === 'audio_url'),
    media: body.content.filter((c) => c.type === 'video_url' || c.type === 'audio_url'),
    resolution: body.resolution ?? (caps.resolutions.includes('720p') ? '720p' : caps.resolutions[0]!),
    duration: body.duration ?? 5,
    ratio: body.ratio ?? 'adaptive',
    draftPreview: body.draft ?? false,
  };
}

function enforce(facts: VideoFacts, applies: VideoRule['applies']): void {
  for (const rule of VIDEO_RULES) {
    if (rule.applies !== applies) continue;
    const violation = rule.violation(facts);
    if (violation) throw violation;
  }
}

/**
 * Checks a request against every rule of VIDEO_RULES that applies to it and answers it with the
 * spec's defaults applied. Each violation is a 400 that names the rule.
 */
export function normalizeVideoRequest(
  model: ModelEntry,
  body: VideoRequestBody,
  context: { draft: DraftInfo | null; now: Date; accountDefaultMode: 'auto' | 'upstream' | 'tos'; allowPrivateTargets: boolean },
): NormalizedVideoRequest {
  const f = factsOf(model, body, { draft: context.draft, now: context.now, allowPrivateTargets: context.allowPrivateTargets });
  enforce(f, 'every_request');
  // An account default the model cannot honour falls back to auto; only an explicit mode is refused.
  const defaultMode = context.accountDefaultMode === 'upstream' && !f.caps.upstream_url_mode ? 'auto' : context.accountDefaultMode;
  const common = {
    content: body.content,
    video_url_mode: body.video_url_mode ?? defaultMode,
    video_url_mode_explicit: body.video_url_mode !== undefined,
    return_last_frame: body.return_last_frame ?? false,
    camera_fixed: body.camera_fixed ?? false,
    watermark: body.watermark ?? false,
    service_tier: body.service_tier ?? 'default',
    safety_identifier: body.safety_identifier ?? null,
  } as const;
  return f.drafts.length > 0 ? { ...common, ...draftFinal(f) } : { ...common, ...generation(f) };
}

/** The final step of the draft flow: the draft's own settings, at the model's final resolution. */
function draftFinal(f: VideoFacts) {
  enforce(f, 'draft_final');
  const draft = f.draft!;
  return {
    mode: 'draft_final' as const,
    resolution: f.caps.resolutions.includes('1080p') ? '1080p' : f.caps.resolutions[f.caps.resolutions.length - 1]!,
    ratio: draft.request.ratio,
    duration: draft.request.duration,
    seed: draft.request.seed,
    generate_audio: draft.request.generate_audio,
    draft: false,
    has_reference_video: draft.request.has_reference_video,
    draft_task: { id: draftId(f), upstream_id: draft.upstreamId! },
    billed_seconds: draft.request.billed_seconds,
  };
}

function generation(f: VideoFacts) {
  enforce(f, 'generation');
  return {
    mode: inputMode(f),
    resolution: f.draftPreview ? '480p' : f.resolution,
    ratio: f.ratio,
    duration: f.duration,
    seed: f.body.seed ?? -1,
    generate_audio: f.caps.audio ? (f.body.generate_audio ?? true) : null,
    draft: f.draftPreview,
    has_reference_video: f.body.content.some((c) => c.type === 'video_url'),
    draft_task: null,
    billed_seconds: f.duration === -1 ? f.caps.auto_duration_seconds : f.duration,
  };
}
