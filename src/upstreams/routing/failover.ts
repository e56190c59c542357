import { isCredentialRefusal, refusesCredentials, UpstreamError } from '../errors';

/** Why an attempt on one channel was given up for the next: the label of the failover metric too. */
export type FailoverReason = 'connect' | 'timeout' | 'network' | 'server_error' | 'rate_limited' | 'credentials_refused' | 'forbidden';

/** What a failed attempt means for the request: try another channel (and why), or stop and answer with this error. */
export type AttemptVerdict = { readonly failover: true; readonly reason: FailoverReason } | { readonly failover: false };

const FINAL: AttemptVerdict = { failover: false };
const VERDICTS: Readonly<Record<FailoverReason, AttemptVerdict>> = {
  connect: { failover: true, reason: 'connect' },
  timeout: { failover: true, reason: 'timeout' },
  network: { failover: true, reason: 'network' },
  server_error: { failover: true, reason: 'server_error' },
  rate_limited: { failover: true, reason: 'rate_limited' },
  credentials_refused: { failover: true, reason: 'credentials_refused' },
  forbidden: { failover: true, reason: 'forbidden' },
};

/**
 * The failover rule of docs/operations.md (Routing), for an error raised before any byte reached
 * the client. `outcomeMatters`: the call creates provider state the gateway must not make twice (an
 * async task's submit); there a request that may have been accepted (isOutcomeUnknown) is never
 * tried elsewhere; a refused connection, a 429, refused credentials and a 5xx carrying the
 * provider's error code are. A synchronous call that may have been
 * sent is tried elsewhere: the client is charged once, by the channel that served.
 */
export function classifyFailure(err: unknown, outcomeMatters: boolean): AttemptVerdict {
  if (!(err instanceof UpstreamError)) return FINAL;
  if (outcomeMatters && isOutcomeUnknown(err)) return FINAL;
  switch (err.kind) {
    case 'connect':
      return VERDICTS.connect;
    case 'timeout':
      return VERDICTS.timeout;
    case 'network':
      return VERDICTS.network;
    case 'protocol':
      return FINAL;
    case 'http':
      break;
  }
  if (err.status === 429) return VERDICTS.rate_limited;
  // Only a refusal of the credentials themselves disables the channel; another 403 of the
  // operator's account (a model or region it may not use, no balance) is an ordinary failure.
  if (refusesCredentials(err)) return VERDICTS.credentials_refused;
  if (isCredentialRefusal(err)) return VERDICTS.forbidden;
  // A stream's in-band error (status 502, set by the protocol) is not an HTTP 5xx of the provider;
  // the caller classifies only failures before the first byte, where it counts as one.
  if (err.status >= 500) return VERDICTS.server_error;
  return FINAL;
}

/**
 * A failure after which the provider may have accepted the request: it was sent (or being sent)
 * when the deadline passed or the connection broke, or a 5xx came that need not be the provider's
 * own verdict: a 502 or 504 (what a gateway or proxy in front of the provider answers when the
 * backend is slow or gone, possibly after it took the request), or a 5xx naming no error code of
 * the provider's (a proxy's page, a bare status). A call that creates provider state is never
 * sent to another channel after one (outcomeMatters).
 */
export function isOutcomeUnknown(err: unknown): boolean {
  if (!(err instanceof UpstreamError)) return false;
  if (err.kind === 'timeout' || err.kind === 'network') return true;
  return err.kind === 'http' && err.status >= 500 && (err.status === 502 || err.status === 504 || err.code === null);
}

/**
 * A Retry-After as milliseconds from `now`: delta-seconds or an HTTP date (RFC 9110 §10.2.3);
 * null when absent or unreadable. A date in the past is 0. Capped, so that a provider (or a proxy)
 * that sends a year cannot take a channel away for a year.
 */
export function retryAfterMs(value: string | null, now: number, capMs: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    // An HTTP date names its weekday and month; Date.parse alone would take "-5" as a year.
    const at = /[A-Za-z]/.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
    if (Number.isNaN(at)) return null;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, capMs);
}
