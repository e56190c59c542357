/**
 * A failed upstream call: an HTTP error answer (status ≥ 400), an error the provider sent inside a
 * stream (status 502), or no answer at all (status 0): `connect` when no connection was made, so
 * the provider never saw the request; `timeout` or `network` when it may have (it was sent, or
 * being sent, when the deadline passed or the connection broke). `retryAfter` is the provider's Retry-After,
 * as it sent it. Each protocol's `errorOf` (src/upstreams/<protocol>/) makes one from its
 * provider's error answer; features only read it.
 */
export class UpstreamError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly kind: 'http' | 'connect' | 'timeout' | 'network' | 'protocol' = 'http',
    readonly retryAfter: string | null = null,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/**
 * The provider refused the gateway's own credentials or the operator's account (401, 403): the
 * operator's to mend, never a refusal of the client's request (only refusesCredentials disables
 * the channel). Such an error carries the gateway's message, not the
 * provider's, which may quote part of the gateway's key (credentialRefusal).
 */
export function isCredentialRefusal(err: unknown): boolean {
  return err instanceof UpstreamError && (err.status === 401 || err.status === 403);
}

/**
 * The error every protocol gives for a refusal of the gateway's credentials: the provider's words are not passed on.
 * A 403 only where the protocol's adapter recognises the provider's answer as one (its error code
 * names the key, the signature or a grant of the gateway's); any other 403 is forbiddenByProvider.
 */
export function credentialRefusal(status: 401 | 403, channel: string): UpstreamError {
  return new UpstreamError(status, `channel ${channel}: the provider refused the gateway's credentials (HTTP ${status})`, 'upstream_auth_failed');
}

/**
 * A 403 the adapter cannot tell to be about the gateway's credentials: a model the account may not
 * use, a region blocked, a feature the organisation lacks, some of which one client's request
 * alone can cause. Still the operator's business (isCredentialRefusal), in the gateway's words,
 * but no reason to take the channel away from every model (refusesCredentials).
 */
export function forbiddenByProvider(channel: string): UpstreamError {
  return new UpstreamError(403, `channel ${channel}: the provider refused access (HTTP 403) without naming the gateway's credentials`, 'upstream_forbidden');
}

/**
 * The provider refused the gateway's credentials themselves, so the channel cannot serve anyone
 * until an operator mends it: a 401, or a 403 its adapter recognised (credentialRefusal).
 */
export function refusesCredentials(err: unknown): boolean {
  return err instanceof UpstreamError && (err.status === 401 || (err.status === 403 && err.code === 'upstream_auth_failed'));
}

/** A header value that can be passed on as it came: printable ASCII, as HTTP allows. */
const PASSABLE_HEADER = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** The provider's Retry-After, unchanged, or null when it sent none the gateway could pass on. */
export function retryAfterOf(headers: Readonly<Record<string, string>>): string | null {
  const value = headers['retry-after'];
  return typeof value === 'string' && PASSABLE_HEADER.test(value) ? value : null;
}

/**
 * The message of an error answer that is not in the provider's error format (a proxy's HTML page,
 * plain text): its status and content type only. Its body is not passed on: it may quote anything,
 * the request and its credentials included, and a client is no wiser for a page of HTML.
 */
export function unreadableErrorMessage(status: number, headers: Readonly<Record<string, string>>, channel: string): string {
  const type = headers['content-type'];
  return `channel ${channel}: the provider answered HTTP ${status}${type ? ` (${type.split(';')[0]!.trim()})` : ''} without an error it documents`;
}
