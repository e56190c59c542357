/**
 * Tavily's search API, `https://api.tavily.com`: https://docs.tavily.com/documentation/api-reference/endpoint/search
 * (OpenAPI document https://tavily.com/.well-known/openapi.json; HTTP errors
 * https://help.tavily.com/articles/8645538886-understanding-http-errors). Bearer authentication
 * with a Tavily API key. A refusal is `{"detail": {"error": "<message>"}}` with the HTTP status:
 * 400 bad request, 401 missing or invalid key, 429 rate limit, 432 plan or key limit, 433
 * pay-as-you-go limit, 500. The official SDK (`@tavily/core`) reads `detail.error` the same way.
 */
import { retryAfterOf, unreadableErrorMessage, type UpstreamError } from '../errors';
import type { Protocol } from '../protocol';
import { isObject, searchRefusal, type SearchRefusal } from '../web-search';
import type { WireAnswer } from '../wire';

function refusalOf(status: number): SearchRefusal {
  if (status === 401) return 'credentials';
  // Tavily documents 401 for a missing or invalid key and no 403: one is not read as the key's.
  if (status === 403) return 'forbidden';
  if (status === 432 || status === 433) return 'account_limit';
  if (status === 429) return 'rate_limited';
  if (status >= 400 && status < 500) return 'rejected';
  return 'provider_failure';
}

function tavilyErrorOf(answer: WireAnswer, channel: string): UpstreamError {
  let message = '';
  try {
    const body: unknown = JSON.parse(answer.text());
    const detail = isObject(body) ? body['detail'] : undefined;
    // FastAPI's own refusals (a malformed body) carry `detail` as a string or a list.
    if (isObject(detail) && typeof detail['error'] === 'string') message = detail['error'];
    else if (typeof detail === 'string') message = detail;
  } catch {
    // not JSON (a proxy's page): its status and content type, below
  }
  if (message === '') message = unreadableErrorMessage(answer.status, answer.headers, channel);
  return searchRefusal(channel, refusalOf(answer.status), answer.status, message, retryAfterOf(answer.headers));
}

export const tavilyProtocol: Protocol = {
  name: 'tavily',
  reference: 'https://docs.tavily.com/documentation/api-reference/endpoint/search',
  // `agent`: the risk agent's catalog entry names the channel its searches go through.
  serves: ['search', 'agent'],
  auth: ['bearer'],
  simulatorPrefix: '/tavily',
  errorOf: tavilyErrorOf,
};
