/**
 * What a web search is to every provider protocol that serves one (src/upstreams/<protocol>/): the
 * gateway's typed ask, the gateway's reading of the provider's answer, and the adapter that turns
 * one into the other over a channel. Provider-neutral: no provider's field is named here. The
 * cached web search (src/agents/search) picks the adapter by its channel's protocol
 * (web-search-adapters.ts) and keeps the cache, the billing and the reading of the pages.
 */
import { credentialRefusal, forbiddenByProvider, UpstreamError } from './errors';
import type { WireAnswer, WireTransport } from './wire';

/** A search as the gateway asks a provider for it. */
export interface WebSearchAsk {
  /** The search terms, as the provider takes them. */
  readonly query: string;
  /** Only pages on these domains or their subdomains (lower-case host names); empty: the whole web. */
  readonly domains: readonly string[];
  /** The most results wanted (the provider may answer fewer). */
  readonly maxResults: number;
  /** The catalog model the search is for, for the channel's metrics. */
  readonly model: string;
}

/** One page a provider found. Strings are '' where the provider gave nothing usable. */
export interface WebSearchHit {
  readonly title: string;
  readonly url: string;
  /** The provider's text about the page: what the gateway reads names and dates in. */
  readonly snippet: string;
  /** The page's publication date as `YYYY-MM-DD`, '' when unknown (calendarDate). */
  readonly publishedAt: string;
}

/** A provider's answer as the gateway reads it: an empty list is an answer (and billed as one). */
export interface WebSearchReading {
  readonly hits: readonly WebSearchHit[];
  /** The provider's id of this search, for the bill and support; null when it gave none. */
  readonly requestId: string | null;
}

/** A protocol's web-search adapter. Throws the protocol's UpstreamError for an error answer. */
export interface WebSearchAdapter {
  search(transport: WireTransport, ask: WebSearchAsk, signal?: AbortSignal): Promise<WebSearchReading>;
}

const LEADING_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])/;

/**
 * A provider's publication date as the calendar date it names (`YYYY-MM-DD`), '' when it names
 * none. A value that starts with a date (`2025-02-23`, `2025-02-23T08:18:30+08:00`) keeps that
 * date as written, in the page's own time zone; any other date the platform can parse (an HTTP
 * date, `Sun, 01 Jun 2025 00:00:00 GMT`) is read in UTC. The gateway compares these as strings
 * (the report's historical-record rule), so every adapter hands them over in this one form.
 */
export function calendarDate(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') return '';
  const text = value.trim();
  const leading = LEADING_DATE.exec(text);
  if (leading) return validDate(leading[1]!, leading[2]!, leading[3]!);
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 10) : '';
}

function validDate(y: string, m: string, d: string): string {
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d) ? `${y}-${m}-${d}` : '';
}

/**
 * The JSON object of a provider's search answer: an error status is the protocol's error
 * (`errorOf`), anything but a JSON object the provider's fault (502 `protocol`, never billed).
 */
export function answerObject(answer: WireAnswer, channel: string, errorOf: (answer: WireAnswer, channel: string) => UpstreamError): Readonly<Record<string, unknown>> {
  if (answer.status >= 400) throw errorOf(answer, channel);
  const body = answer.json();
  if (!isObject(body)) throw unreadableAnswer(channel, 'an answer that is not a JSON object');
  return body;
}

/** An answer that does not read as the provider's: its fault (502), not the client's. */
export function unreadableAnswer(channel: string, what: string): UpstreamError {
  return new UpstreamError(502, `channel ${channel} answered the search with ${what}`, 'upstream_invalid_answer', 'protocol');
}

export function isObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A provider's string member, '' for anything else. */
export function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** What a search provider's refusal is to the gateway, whatever the provider's words for it. */
export type SearchRefusal = 'credentials' | 'forbidden' | 'account_limit' | 'rate_limited' | 'rejected' | 'provider_failure';

/**
 * The gateway's error for a search provider's refusal, one rule for every search protocol (each
 * protocol's errorOf says which refusal an answer is): a refused key and the limits of the
 * operator's account carry the gateway's words (the provider's may quote the key, and are the
 * operator's business, not the client's: the risk report shows a failed search's message);
 * the others the provider's message.
 */
export function searchRefusal(channel: string, refusal: SearchRefusal, status: number, message: string, retryAfter: string | null): UpstreamError {
  switch (refusal) {
    case 'credentials':
      return credentialRefusal(status === 403 ? 403 : 401, channel);
    case 'forbidden':
      return forbiddenByProvider(channel);
    case 'account_limit':
      return new UpstreamError(403, `channel ${channel}: the operator's account at the search provider is out of credit or over its limit (HTTP ${status})`, 'upstream_account_balance');
    case 'rate_limited':
      return new UpstreamError(429, message, 'upstream_rate_limited', 'http', retryAfter);
    case 'rejected':
      return new UpstreamError(status, message, 'upstream_rejected', 'http', retryAfter);
    case 'provider_failure':
      return new UpstreamError(status >= 500 ? status : 502, message, 'upstream_error', 'http', retryAfter);
  }
}
