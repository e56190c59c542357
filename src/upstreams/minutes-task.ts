/**
 * What a meeting-minutes transcription task is to every provider protocol that runs one
 * (src/upstreams/<protocol>/): the gateway's typed ask, the gateway's reading of the provider's
 * task, and the adapter that turns one into the other over a channel. Provider-neutral: no
 * provider's field is named here. The minutes feature (src/minutes) picks the adapter by its
 * channel's protocol (minutes-adapters.ts) and keeps validation, pricing and rendering.
 */
import type { WireTransport } from './wire';

/** The extras a minutes provider may produce besides the transcript (the spec's `features`). */
export type MinutesFeature = 'summary' | 'chapters' | 'todos' | 'qa' | 'translate';

/** A transcription as the gateway asks a provider for it (every default of the request applied). */
export interface MinutesTaskAsk {
  /** The gateway's task id: the client-chosen task or request id where the provider takes one (idempotent resubmission). */
  readonly taskId: string;
  /** The provider's model or resource (the catalog's `upstream_model`, else the gateway's model id). */
  readonly model: string;
  readonly fileUrl: string;
  /** The file's format as the client declared it (`mp3`, `wav`, `m4a`, …). */
  readonly fileType: string;
  /** The file's size in bytes as probed at submission, when known. */
  readonly fileBytes: number | null;
  /** The spoken language, the gateway's code (`zh_cn`, `en_us`, …). */
  readonly language: string;
  readonly speakerIdentification: boolean;
  /** Speakers the client expects; null: let the provider decide. */
  readonly numberOfSpeakers: number | null;
  readonly hotWords: readonly string[] | null;
  readonly wordTimestamps: boolean;
  /** The extras asked of a provider that writes them; null for a transcription-only provider. */
  readonly extras: {
    readonly all: boolean;
    readonly features: readonly MinutesFeature[];
    readonly targetLang: string | null;
  } | null;
}

export interface MinutesWord {
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
}

export interface MinutesSegment {
  readonly id: string;
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
  /** null when speaker identification was off or the provider named none. */
  readonly speakerId: string | null;
  /** Only when word timestamps were asked for and the provider gave them. */
  readonly words?: readonly MinutesWord[];
}

/** A finished transcription as the provider reported it; `durationMs` is what the task is billed by. */
export interface MinutesTranscriptReading {
  readonly durationMs: number;
  readonly language: string;
  readonly segments: readonly MinutesSegment[];
  readonly speakers: readonly { readonly id: string; readonly displayName: string }[];
}

/** A provider's task as the gateway reads it. */
export type MinutesTaskReading =
  | {
      readonly state: 'pending';
      readonly upstreamStatus: 'queued' | 'running';
      /** The recording's length when the provider already knows it (a too-long file fails early); null otherwise. */
      readonly durationMs: number | null;
      /**
       * The id to read the task by from now on, when the adapter changes it: Tingwu's marks the
       * recording's length as read, so that later polls do not download its transcription again.
       */
      readonly upstreamId?: string;
    }
  | {
      readonly state: 'succeeded';
      readonly transcript: MinutesTranscriptReading;
      /** The extras asked for, by feature name, each as the adapter documents it; empty for a transcription-only provider. */
      readonly extras: Readonly<Record<string, unknown>>;
    }
  | { readonly state: 'failed'; readonly error: { readonly code: string; readonly message: string } };

/**
 * A protocol's minutes adapter: submits a transcription (idempotent by the ask's task id where the
 * provider allows it) and reads it. Each throws the protocol's UpstreamError for an error answer.
 */
export interface MinutesTaskAdapter {
  submit(transport: WireTransport, ask: MinutesTaskAsk, signal?: AbortSignal): Promise<{ readonly upstreamId: string }>;
  get(transport: WireTransport, upstreamId: string, ask: MinutesTaskAsk): Promise<MinutesTaskReading>;
}
