/**
 * The Volcengine OpenAPI envelope every control-plane service of Volcengine speaks (Ark's asset
 * library among them): the operation named by the `Action` and `Version` query parameters, its
 * parameters a JSON body, the request signed by the channel (src/upstreams/auth/volcengine-signature.ts),
 * and every answer `{ResponseMetadata: {RequestId, Action, Version, Service, Region, Error?: {Code,
 * Message}}, Result}`.
 *
 * References: common parameters https://www.volcengine.com/docs/6469/1126803 (Action and Version in
 * the query), the answer's structure https://www.volcengine.com/docs/6499/1125371.
 */
import { UpstreamError } from '../errors';
import type { WireAnswer, WireRequest } from '../wire';
import { openapiErrorIn, volcengineOpenapiProtocol } from './protocol';

/** One Action of a service at a Version, its parameters the JSON body (POST, as the service's JSON APIs take them). */
export function actionRequest(action: string, version: string, parameters: Readonly<Record<string, unknown>>): WireRequest {
  return { method: 'POST', path: '/', query: { Action: action, Version: version }, body: parameters };
}

/**
 * One Action of a service at a Version, its parameters in the query beside Action and Version
 * (GET, as VOD's media Actions take them; a list or object parameter is sent as its JSON text).
 */
export function queryActionRequest(action: string, version: string, parameters: Readonly<Record<string, string>>): WireRequest {
  return { method: 'GET', path: '/', query: { Action: action, Version: version, ...parameters } };
}

/**
 * The `Result` of a successful answer. An error status, or an answer naming an `Error` whatever
 * its status, becomes the gateway's error by the protocol's one error mapping (protocol.ts).
 */
export function resultOf(answer: WireAnswer, channel: string): Readonly<Record<string, unknown>> {
  if (answer.status >= 400) throw volcengineOpenapiProtocol.errorOf(answer, channel);
  const body = answer.json();
  if (openapiErrorIn(body)) throw volcengineOpenapiProtocol.errorOf(answer, channel);
  const result = (body as { Result?: unknown } | null)?.Result;
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new UpstreamError(502, `channel ${channel} answered without a Result object`, null, 'protocol');
  }
  return result as Readonly<Record<string, unknown>>;
}

/** A string field of a Result, or null when it is absent or not a non-empty string. */
export function stringField(result: Readonly<Record<string, unknown>>, name: string): string | null {
  const value = result[name];
  return typeof value === 'string' && value !== '' ? value : null;
}
