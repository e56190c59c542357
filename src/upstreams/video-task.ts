/**
 * What a video-generation task is to every provider protocol that runs one (src/upstreams/<protocol>/):
 * the gateway's typed request, the gateway's reading of the provider's task, and the adapter that
 * turns one into the other over a channel. Provider-neutral: no provider's field is named here.
 */
import type { WireTransport } from './wire';

/** A content item as the gateway's video request has it (src/video). */
export interface VideoContentItem {
  readonly type: 'text' | 'image_url' | 'video_url' | 'audio_url' | 'draft_task';
  readonly text?: string;
  readonly image_url?: { readonly url: string };
  readonly video_url?: { readonly url: string };
  readonly audio_url?: { readonly url: string };
  readonly role?: string;
}

/**
 * A video task as the gateway asks a provider for it: the members of the gateway's own video
 * request (src/video, every default applied), `model` the provider's model id, and `content` with
 * `asset://` images already naming the provider's assets.
 */
export interface VideoTaskAsk {
  readonly model: string;
  readonly content: readonly VideoContentItem[];
  readonly mode: 'text' | 'frames' | 'references' | 'draft_final';
  readonly resolution: string;
  readonly ratio: string;
  readonly duration: number;
  readonly seed: number;
  /** null: the model takes no such field. */
  readonly generate_audio: boolean | null;
  readonly draft: boolean;
  readonly return_last_frame: boolean;
  readonly camera_fixed: boolean;
  readonly watermark: boolean;
  readonly service_tier: 'default' | 'flex';
  readonly safety_identifier: string | null;
  /** The final step of a draft: the draft's task as the provider knows it. */
  readonly draft_task: { readonly upstream_id: string } | null;
}

/** What a finished video is billed by, as the provider reports it (the feature rounds and caps it). */
export interface VideoTaskUsage {
  /** The video's duration in seconds, as reported (a number, or whatever else the provider sent). */
  readonly duration_seconds: unknown;
  /** The video's resolution, as reported (e.g. `720p`). */
  readonly resolution: unknown;
  /** The tokens a token-priced model bills; null when the provider reports none. */
  readonly completion_tokens: number | null;
}

/** A provider's task as the gateway reads it. */
export type VideoTaskReading =
  | { readonly state: 'pending'; readonly upstreamStatus: 'queued' | 'running' }
  | {
      readonly state: 'succeeded';
      readonly video_url: string;
      readonly last_frame_url: string | null;
      /** Unix seconds the provider's video URL stops working; null when unknown. */
      readonly video_url_expires_at: number | null;
      readonly usage: VideoTaskUsage;
    }
  | { readonly state: 'failed'; readonly error: { readonly code: string; readonly message: string } };

/**
 * A protocol's video-task adapter: creates a task (the gateway's task id as the client request
 * id), reads it, cancels it. Each throws the protocol's UpstreamError for an error answer.
 */
export interface VideoTaskAdapter {
  create(transport: WireTransport, ask: VideoTaskAsk, taskId: string): Promise<{ upstreamId: string }>;
  get(transport: WireTransport, upstreamId: string): Promise<VideoTaskReading>;
  cancel(transport: WireTransport, upstreamId: string): Promise<void>;
}
