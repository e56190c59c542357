/**
 * What a subtitle erase task is to every provider protocol that runs one (src/upstreams/<protocol>/):
 * the gateway's typed ask, the gateway's reading of the provider's work, and the adapter that turns
 * one into the other over a channel. Provider-neutral: no provider's field is named here. The erase
 * feature (src/media-tasks/erase) picks the adapter by its channel's protocol (erase-adapters.ts)
 * and keeps validation, pricing, archiving and rendering.
 */
import type { WireTransport } from './wire';

/** A region where subtitles sit, as fractions of the frame (x + width ≤ 1, y + height ≤ 1). */
export interface EraseRegion {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** A subtitle erase as the gateway asks a provider for it (every default of the request applied). */
export interface EraseTaskAsk {
  /** The gateway's task id: the client token where the provider takes one, and a label of the provider's work. */
  readonly taskId: string;
  /** Where the provider keeps the video and its erased copy (the catalog's `upstream_space`, else the gateway's model id). */
  readonly space: string;
  /** The client's public https URL of the video; the provider fetches it. */
  readonly videoUrl: string;
  /** Where the subtitles sit; null: the provider finds them. */
  readonly regions: readonly EraseRegion[] | null;
  /** The longest video the model erases (its `max_duration_seconds`): a longer one fails `video_too_long` before the provider erases it. */
  readonly maxSeconds: number;
}

/** The provider's work as the gateway reads it. */
export type EraseTaskReading =
  | {
      readonly state: 'pending';
      readonly upstreamStatus: 'queued' | 'running';
      /** The provider's id to read from now on, when its work moved on to another task of its own. */
      readonly upstreamId?: string;
    }
  | {
      readonly state: 'succeeded';
      /** Where the gateway fetches the erased video (the provider's own link, for archiving). */
      readonly videoUrl: string;
      /** The seconds of video the provider reports it output (what it bills by), as reported. */
      readonly durationSeconds: unknown;
      /** The provider's own result, shown to the client with the gateway's link in it. */
      readonly result: Readonly<Record<string, unknown>>;
    }
  | { readonly state: 'failed'; readonly error: { readonly code: string; readonly message: string } };

/**
 * A protocol's subtitle erase adapter: submits the ask and reads the provider's work by the id it
 * answered. Each throws the protocol's UpstreamError for an error answer.
 */
export interface EraseTaskAdapter {
  submit(transport: WireTransport, ask: EraseTaskAsk): Promise<{ readonly upstreamId: string }>;
  get(transport: WireTransport, upstreamId: string, ask: EraseTaskAsk): Promise<EraseTaskReading>;
  /**
   * Tells the provider to stop; null when the provider publishes no way to (the gateway then only
   * stops reading the work and releases the reservation: docs/providers.md says what the provider
   * still bills).
   */
  readonly cancel: ((transport: WireTransport, upstreamId: string) => Promise<void>) | null;
}
