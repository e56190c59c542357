import type { MinutesTaskAsk } from '../upstreams/minutes-task';
import { mediaSuffix, type NormalizedMinutesRequest } from './request';

/**
 * A minutes task as its provider's adapter is asked for it (src/upstreams/minutes-task.ts): the
 * task's request, every default applied, in the seam's provider-neutral terms.
 */

/** The client's hot words, one string, as a list: split at commas (ASCII or CJK), enumeration commas, semicolons and line breaks. */
export function hotWordList(hotWords: string | null): string[] | null {
  const words = (hotWords ?? '')
    .split(/[,，、;；\r\n]+/)
    .map((w) => w.trim())
    .filter((w) => w !== '');
  return words.length > 0 ? words : null;
}

/**
 * The ask of a task: `model` the provider's model or resource (the catalog's `upstream_model`,
 * else the gateway's model id), `fileType` the container the file's name ends with (`mp3`, `m4a`,
 * …) when the gateway knows the suffix, else the request's `audio` or `video`.
 */
export function minutesAsk(task: { readonly taskId: string; readonly request: NormalizedMinutesRequest }, model: string): MinutesTaskAsk {
  const r = task.request;
  return {
    taskId: task.taskId,
    model,
    fileUrl: r.file_url,
    fileType: mediaSuffix(r.file_name) ?? r.file_type,
    fileBytes: r.file_bytes ?? null,
    language: r.source_lang,
    speakerIdentification: r.speaker_identification,
    numberOfSpeakers: r.number_of_speakers > 0 ? r.number_of_speakers : null,
    hotWords: hotWordList(r.hot_words),
    wordTimestamps: r.need_word_time_series,
    extras: r.protocol === 'partner' ? { all: r.all_activate, features: r.features, targetLang: r.target_lang } : null,
  };
}
