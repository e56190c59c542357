/** The simulator's route types: what a route module registers and what its handler receives. */
import type http from 'node:http';
import type { WebSocket } from 'ws';

/**
 * How a route wants its request body: parsed JSON (`ctx.body`), raw bytes (`ctx.rawBody`, e.g.
 * for multipart uploads), or left unread (`none`, e.g. for GET).
 */
export type BodyMode = 'json' | 'raw' | 'none';

export interface SimContext {
  readonly req: http.IncomingMessage;
  readonly res: http.ServerResponse;
  /** Values of the `:name` segments of the route's path. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The parsed JSON body for `json` routes (undefined when the body is empty). */
  readonly body: unknown;
  /** The raw body for `raw` routes. */
  readonly rawBody: Buffer | undefined;
}

export type SimHandler = (ctx: SimContext) => void | Promise<void>;

export interface ExtraRoute {
  /** Upper-case HTTP method, e.g. `POST`. */
  readonly method: string;
  /** An exact path (`/v1/images/generations`) or one with `:name` segments (`/v1/videos/:id`). */
  readonly path: string;
  readonly handler: SimHandler;
  /** Default: `json` for POST, PUT and PATCH, `none` otherwise. */
  readonly body?: BodyMode;
  /** Default: 10 MB. Larger bodies are answered 413. */
  readonly maxBodyBytes?: number;
}

/**
 * A WebSocket endpoint (an exact path): `refuse` decides the handshake (null: upgraded; else the
 * HTTP answer refusing it, as a provider refuses credentials), `session` runs the connection.
 */
export interface SocketRoute {
  readonly path: string;
  readonly refuse?: (req: http.IncomingMessage) => SocketRefusal | null;
  readonly session: (socket: WebSocket, req: http.IncomingMessage) => void;
}

/** An upgrade refused: the HTTP status and the JSON body answered instead. */
export interface SocketRefusal {
  readonly status: number;
  readonly body: unknown;
}
