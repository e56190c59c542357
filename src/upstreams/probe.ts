import { Channel, type ChannelConfig } from './channel';
import { UpstreamError } from './errors';
import type { WireAnswer, WireRequest } from './wire';

/** How a channel's test call ended. */
export type ProbeOutcome = 'ok' | 'credentials_refused' | 'answered_with_error' | 'provider_error' | 'timeout' | 'unreachable';

export interface ProbeResult {
  readonly outcome: ProbeOutcome;
  /** The provider's HTTP status; null when there was no answer. */
  readonly status: number | null;
  readonly latency_ms: number;
  /** The gateway's own words: never the provider's text, which may quote a credential (OpenAI's 401 quotes part of the key). */
  readonly error: string | null;
}

/**
 * The one small call a channel's test makes: OpenAI's model list (`GET /models`, free) for
 * `openai` channels; for the other protocols an authenticated `GET` of the base URL, which shows
 * that the provider is reachable and whether it refuses the credentials, and costs nothing.
 * Not checked against the providers other than OpenAI: whether each answers that GET with 401 for
 * a wrong key, or with 404 whatever the key, so `answered_with_error` proves reachability only.
 */
export function probeRequestOf(protocol: string): WireRequest {
  return protocol === 'openai' ? { method: 'GET', path: '/models' } : { method: 'GET', path: '' };
}

/** Makes the probe through `call` (the channel's transport) and classifies it; costs no client money (nothing is reserved). */
export async function probeChannel(call: (request: WireRequest) => Promise<WireAnswer>, protocol: string, now: () => number = () => performance.now()): Promise<ProbeResult> {
  const started = now();
  const latency = () => Math.round(now() - started);
  try {
    const answer = await call(probeRequestOf(protocol));
    return { ...classify(answer.status), status: answer.status, latency_ms: latency() };
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    const timedOut = err.kind === 'timeout';
    return {
      outcome: timedOut ? 'timeout' : 'unreachable',
      status: null,
      latency_ms: latency(),
      error: timedOut ? 'the provider did not answer within the channel\'s timeout_ms' : 'the provider could not be reached',
    };
  }
}

function classify(status: number): { outcome: ProbeOutcome; error: string | null } {
  if (status < 400) return { outcome: 'ok', error: null };
  if (status === 401 || status === 403) return { outcome: 'credentials_refused', error: `the provider refused the channel's credentials (HTTP ${status})` };
  if (status >= 500) return { outcome: 'provider_error', error: `the provider failed (HTTP ${status})` };
  return { outcome: 'answered_with_error', error: `the provider answered HTTP ${status} (reachable; the credentials are not proven)` };
}

/**
 * Tests a channel as the log records it, on a pool of its own closed afterwards: the answer does
 * not depend on whether this process has applied the latest change yet, and a disabled channel can
 * be tested before it is enabled again.
 */
export async function probeChannelConfig(config: ChannelConfig): Promise<ProbeResult> {
  const channel = new Channel(config);
  try {
    return await probeChannel((request) => channel.call(request), config.protocol);
  } finally {
    await channel.close();
  }
}
