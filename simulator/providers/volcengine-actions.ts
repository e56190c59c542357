/**
 * What the simulated Volcengine OpenAPI's services share (simulator/providers/volcengine-openapi.ts
 * dispatches to them by the service a request is signed for): an Action's handler, the error
 * answer it throws, and the provider's time-stamped ids.
 */
import type { IncomingMessage } from 'node:http';

/** An OpenAPI error answer: the status and the `ResponseMetadata.Error` it carries. */
export class OpenApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** One Action: its parameters (the query's besides Action and Version, and a JSON body's members) → `Result`. */
export type Action = (parameters: Record<string, unknown>, req: IncomingMessage) => Record<string, unknown>;

/** A service's Actions, each at the one Version it answers. */
export type ServiceActions = Readonly<Record<string, { readonly version: string; readonly run: Action }>>;

/** `20260520163350`: the UTC time as the provider's ids and request ids begin. */
export function compactTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\D/g, '').slice(0, 14);
}
