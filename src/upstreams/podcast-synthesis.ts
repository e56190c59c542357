/**
 * What a podcast synthesis is to every provider protocol that makes one (src/upstreams/<protocol>/):
 * the gateway's typed ask, where the audio goes as it arrives, what the provider reports at the
 * end, and the adapter that runs one over a channel. Provider-neutral: no provider's field is
 * named here. The podcast feature (src/media-tasks/podcasts) picks the adapter by its channel's
 * protocol (podcast-adapters.ts) and keeps validation, pricing, the file store and rendering.
 */
import { UpstreamError } from './errors';
import type { WireSocketTransport } from './wire';

/** A podcast as the gateway asks a provider for it (every default of the request applied). */
export interface PodcastAsk {
  /** The catalog model, for the channel's metrics. */
  readonly model: string;
  /** A text the hosts discuss, or a topic they research and discuss. */
  readonly source: { readonly text: string } | { readonly topic: string };
  /** The provider's voice ids of the hosts, in the order they speak. */
  readonly voices: readonly string[];
  readonly format: 'wav' | 'mp3';
}

/**
 * How the audio handed to the sink is encoded: MP3 frames (their concatenation is the file), or
 * raw PCM the gateway puts into a WAV file itself (one header for the whole episode).
 */
export type PodcastAudioEncoding =
  | { readonly container: 'mp3' }
  | { readonly container: 'pcm'; readonly sampleRate: number; readonly channels: number; readonly bitsPerSample: number };

/**
 * What a finished synthesis reports: the audio's length, and the provider's usage (null where it
 * reported none; a resumed synthesis's text is counted once, see the adapter).
 */
export interface PodcastSynthesis {
  readonly durationSeconds: number;
  readonly inputTextTokens: number | null;
  readonly outputAudioTokens: number | null;
}

/**
 * A protocol's podcast adapter. `synthesize` runs the whole synthesis, handing the audio to
 * `write` in order as each part of it becomes final (never a part twice, even across a
 * reconnection), and resolves with the provider's report. It throws the protocol's
 * UpstreamError: a refusal (4xx but 429 and a refused key) for good, anything else transient;
 * and the signal's reason once aborted, the connection closed.
 */
export interface PodcastSynthesisAdapter {
  encoding(format: PodcastAsk['format']): PodcastAudioEncoding;
  synthesize(transport: WireSocketTransport, ask: PodcastAsk, write: (audio: Uint8Array) => Promise<void>, signal: AbortSignal): Promise<PodcastSynthesis>;
}

/**
 * A podcast provider's error with what a client may be told of it: `clientMessage` names the
 * provider's code (or HTTP status) only; the channel's name and the provider's own words stay in
 * `message`, for the gateway's logs.
 */
export class PodcastProviderError extends UpstreamError {
  constructor(
    status: number,
    message: string,
    code: string | null,
    readonly clientMessage: string,
    kind: UpstreamError['kind'] = 'http',
    retryAfter: string | null = null,
  ) {
    super(status, message, code, kind, retryAfter);
  }
}
