/**
 * A transcript as the gateway keeps it (in the task's result): the authoritative segments with
 * their ids, times in milliseconds and speakers, whatever upstream protocol produced them.
 */
export interface Word {
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
}

export interface Segment {
  readonly id: string;
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
  /** null when speaker identification was off. */
  readonly speakerId: string | null;
  /** Only when the request asked for need_word_time_series. */
  readonly words?: readonly Word[];
}

export interface Speaker {
  readonly id: string;
  readonly displayName: string;
}

export interface Transcript {
  readonly durationMs: number;
  readonly language: string;
  readonly segments: readonly Segment[];
  readonly speakers: readonly Speaker[];
}

/** The transcript of a task result (`result.transcript`), or null when there is none (yet). */
export function transcriptOf(result: Record<string, unknown> | null | undefined): Transcript | null {
  const t = result?.transcript as Transcript | undefined;
  return t && Array.isArray(t.segments) ? t : null;
}
