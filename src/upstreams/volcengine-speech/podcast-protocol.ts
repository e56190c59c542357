/**
 * Volcengine's podcast synthesis (豆包语音 播客API, "podcasttts"): one WebSocket per synthesis at
 * `wss://openspeech.bytedance.com/api/v3/sami/podcasttts`, binary frames (podcast-frames.ts).
 * Reference: https://www.volcengine.com/docs/6561/1668014. Its own protocol name, not shared with
 * Volcengine's HTTP speech APIs: its handshake headers differ (the app's id in `X-Api-App-Id`, a
 * fixed `X-Api-App-Key`), which a channel gives as its `headers`.
 *
 * Errors come two ways: a refused handshake (an HTTP status and a body saying why, the
 * reference's "建连响应"), read by `errorOf`; and in the stream, an error frame's code or a
 * session's `status_code` (the reference's §3 codes), read by `podcastCodeError`.
 */
import { credentialRefusal, forbiddenByProvider, retryAfterOf, UpstreamError } from '../errors';
import { PodcastProviderError } from '../podcast-synthesis';
import type { Protocol } from '../protocol';
import type { WireAnswer } from '../wire';

/** The longest provider message kept in an error (a refusal's body may be a whole page). */
const MAX_MESSAGE_CHARS = 300;

/** The provider's log id of a call (`X-Tt-Logid`), which its support asks for. */
function logIdOf(headers: Readonly<Record<string, string>>): string {
  const id = headers['x-tt-logid'];
  return id ? ` (logid ${id})` : '';
}

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_MESSAGE_CHARS ? `${flat.slice(0, MAX_MESSAGE_CHARS)}…` : flat;
}

/** A refused handshake: the gateway's credentials (401, 403), a rate limit (429), or the provider's other answer. */
function handshakeError(answer: WireAnswer, channel: string): UpstreamError {
  if (answer.status === 401) return credentialRefusal(401, channel);
  // A handshake's 403 names no code the gateway could read as its credentials (not checked against the provider).
  if (answer.status === 403) return forbiddenByProvider(channel);
  const message = `channel ${channel} refused the WebSocket with HTTP ${answer.status}: ${excerpt(answer.text()) || 'no reason given'}${logIdOf(answer.headers)}`;
  const told = `the podcast provider refused the connection (HTTP ${answer.status})`;
  if (answer.status === 429) return new PodcastProviderError(429, message, 'upstream_rate_limited', told, 'http', retryAfterOf(answer.headers));
  return new PodcastProviderError(answer.status, message, answer.status >= 500 ? 'upstream_unavailable' : 'upstream_rejected', told);
}

/** The reference's success code (a session's `status_code`). */
export const PODCAST_OK = 20_000_000;

/**
 * An error code of the stream (the reference's §3), as the gateway's error: 45000000 (the
 * concurrency quota) is a rate limit, retried; 40000022 (the strict audit refused the text) and
 * 50302102 (the script model's content filter, or a text over its context) refuse the input for
 * good, as does any other 4xxxxxxx code (40000010: a parameter); 55000000 and any other code are
 * the provider's failure, retried.
 */
export function podcastCodeError(code: number, message: string, channel: string): UpstreamError {
  const text = `channel ${channel}: podcast synthesis error ${code}: ${excerpt(message) || 'no message'}`;
  if (code === 45_000_000) return new PodcastProviderError(429, text, 'upstream_rate_limited', `the podcast provider is busy (${code})`);
  // The audit (40000022) and the script model's filter (50302102) judge the text; the rest of 4xxxxxxx a parameter.
  if (code === 40_000_022) return new PodcastProviderError(400, text, 'input_sensitive_content', `the podcast provider refused the text (${code})`);
  if (code === 50_302_102) return new PodcastProviderError(400, text, 'upstream_rejected', `the podcast provider refused the text (${code})`);
  if (code >= 40_000_000 && code < 50_000_000) return new PodcastProviderError(400, text, 'upstream_rejected', `the podcast provider refused the request (${code})`);
  return new PodcastProviderError(502, text, 'upstream_unavailable', `the podcast provider failed (${code})`);
}

export const volcenginePodcastProtocol: Protocol = {
  name: 'volcengine_podcast',
  reference: 'https://www.volcengine.com/docs/6561/1668014',
  serves: ['podcast'],
  auth: ['headers'],
  simulatorPrefix: '/volcengine-podcast',
  errorOf: handshakeError,
};
