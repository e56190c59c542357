/**
 * The provider-neutral wire: what a protocol adapter (src/upstreams/<protocol>/) builds and reads,
 * and what a channel's transport (Channel.call) sends and answers. A feature never builds one of
 * these itself: it hands its typed request to its protocol's adapter (the dependency rules say so).
 */
import type { SseEvent } from './sse';

export type WireMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** One request to a provider, relative to its channel's base URL; the channel adds authentication. */
export interface WireRequest {
  readonly method: WireMethod;
  /** Appended to the channel's base URL path (`/contents/generations/tasks`); begins with `/`, or is empty. */
  readonly path: string;
  /** Sent as the query string, in the order given (a signature sorts them itself). */
  readonly query?: Readonly<Record<string, string>>;
  /** Extra request headers (a provider's own, e.g. `content-type` for a signed OpenAPI call). */
  readonly headers?: Readonly<Record<string, string>>;
  /** A JSON value, sent as `application/json`; absent for a bodiless request. */
  readonly body?: unknown;
  /** The catalog model the call is for, for the channel's metrics (`none` when absent). */
  readonly model?: string;
}

/**
 * A provider's whole answer, whatever its status (an adapter's `errorOf` turns a refusal into the
 * gateway's error): the status, the headers lower-cased (a repeated header's values joined with
 * `, `), and the body read whole, as bytes, text or JSON.
 */
export interface WireAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** The body as sent (empty for a bodiless answer). */
  bytes(): Uint8Array;
  /** The body as UTF-8 text. */
  text(): string;
  /** The body parsed as JSON; throws an UpstreamError (502, `protocol`) when it is not JSON. */
  json(): unknown;
}

/** The seam a protocol adapter is given: a channel's transport (Channel implements it). */
export interface WireTransport {
  /** The channel's name, for error messages. */
  readonly name: string;
  /** The origin of the channel's base URL: links a provider answers there are the channel's own (isFetchableProviderLink). */
  readonly origin?: string;
  call(request: WireRequest, signal?: AbortSignal): Promise<WireAnswer>;
}

/**
 * A provider's answer to a request whose success is an event stream (text/event-stream): its
 * status and headers, and its body read once, either as server-sent events or, for an answer that
 * is not a stream (a refusal, which some providers send with status 200), whole.
 */
export interface WireEventStream {
  readonly status: number;
  /** Lower-cased, as WireAnswer's. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body as server-sent events; a broken or stalled body throws the transport's UpstreamError. */
  events(): AsyncGenerator<SseEvent>;
  /** The body read whole. */
  whole(): Promise<WireAnswer>;
}

/** A transport that also opens event streams (Channel implements it): what a streaming adapter is given. */
export interface WireEventTransport extends WireTransport {
  openEvents(request: WireRequest, signal?: AbortSignal): Promise<WireEventStream>;
}

/** A WebSocket an adapter opens, relative to its channel's base URL; the channel adds authentication. */
export interface WireSocketRequest {
  /** Appended to the base URL's path; the scheme becomes `wss` for `https` and `ws` for `http`. */
  readonly path: string;
  /** Extra handshake headers (a provider's own, e.g. a request id). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The catalog model the connection is for, for the channel's metrics. */
  readonly model?: string;
}

/** An open WebSocket carrying binary messages. */
export interface WireSocket {
  send(message: Uint8Array): Promise<void>;
  /**
   * The next message; null once the connection has closed (whoever closed it). Throws an
   * UpstreamError (`timeout`) when none comes within the channel's deadline, and the signal's
   * reason once the opener aborts.
   */
  next(): Promise<Uint8Array | null>;
  /** Closes the connection (at once: nothing sent is awaited). */
  close(): void;
}

/** A provider's handshake: the open socket, or its answer refusing the upgrade (an adapter's `errorOf` reads it). */
export type WireSocketOpening = { readonly socket: WireSocket } | { readonly refusal: WireAnswer };

/** The seam a WebSocket adapter is given: a channel's transport (Channel implements it). */
export interface WireSocketTransport {
  readonly name: string;
  open(request: WireSocketRequest, signal?: AbortSignal): Promise<WireSocketOpening>;
}
