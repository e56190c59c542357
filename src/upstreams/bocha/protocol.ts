/**
 * Bocha AI's Web Search API (博查), `https://api.bochaai.com/v1`: the reference is Bocha's
 * "Web Search API" page, https://bocha-ai.feishu.cn/wiki/RXEOw02rFiwzGSkd9mUcqoeAnNK (as published
 * verbatim in public repositories, e.g. fengin/search-server `src/search/proxy/bocha/api_doc.md`,
 * timi233/ent_agent `docs/api/bocha-api.md`). Bearer authentication with a Bocha API key. Its
 * error table: the HTTP status with `{"code": "<status>", "message", "log_id"}` — 400 `Missing
 * parameter query`, 400 `The API KEY is missing` (no Authorization header), 401 `Invalid API KEY`,
 * 403 `You do not have enough money` (the account's balance), 429 `You have reached the request
 * limit`, 500. A success carries `"code": 200` in its body as well.
 */
import { retryAfterOf, unreadableErrorMessage, type UpstreamError } from '../errors';
import type { Protocol } from '../protocol';
import { isObject, searchRefusal, text, type SearchRefusal } from '../web-search';
import type { WireAnswer } from '../wire';

/** Bocha's one 400 that is about the gateway's credentials, not the request (its error table). */
const MISSING_KEY = 'The API KEY is missing';

function refusalOf(status: number, message: string): SearchRefusal {
  if (status === 401 || (status === 400 && message === MISSING_KEY)) return 'credentials';
  // Bocha's 403 is the balance of the operator's account, not a refused key.
  if (status === 403) return 'account_limit';
  if (status === 429) return 'rate_limited';
  if (status >= 400 && status < 500) return 'rejected';
  return 'provider_failure';
}

/** Bocha's `code` of a body, as the HTTP status it stands for (a string or a number); null when it has none. */
export function bochaCode(body: Readonly<Record<string, unknown>>): number | null {
  const code = body['code'];
  const n = typeof code === 'number' ? code : typeof code === 'string' && /^\d{3}$/.test(code) ? Number(code) : NaN;
  return Number.isInteger(n) ? n : null;
}

/**
 * A refusal, from the HTTP status or, when an answer came with 200 and another `code` in its body,
 * from that code (the reference documents its codes as HTTP statuses; whether Bocha ever answers
 * 200 with an error code is not checked against the provider).
 */
export function bochaErrorOf(answer: WireAnswer, channel: string): UpstreamError {
  let body: unknown;
  try {
    body = JSON.parse(answer.text());
  } catch {
    body = undefined;
  }
  const code = isObject(body) ? bochaCode(body) : null;
  const status = answer.status >= 400 ? answer.status : (code ?? 502);
  const reported = isObject(body) ? text(body['message']) || text(body['msg']) : '';
  const message = reported || unreadableErrorMessage(answer.status, answer.headers, channel);
  return searchRefusal(channel, refusalOf(status, reported), status, message, retryAfterOf(answer.headers));
}

export const bochaProtocol: Protocol = {
  name: 'bocha',
  reference: 'https://bocha-ai.feishu.cn/wiki/RXEOw02rFiwzGSkd9mUcqoeAnNK',
  // `agent`: the risk agent's catalog entry names the channel its searches go through.
  serves: ['search', 'agent'],
  auth: ['bearer'],
  simulatorPrefix: '/bocha',
  errorOf: bochaErrorOf,
};
