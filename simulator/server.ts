/**
 * The upstream simulator's HTTP server: a tiny method+path router on plain `node:http` (it is the
 * benchmark's baseline, so no framework), with the chat routes mounted and room for other
 * simulators (video, images...) to register theirs.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { chatRoutes } from './chat';
import { gateRoutes } from './gates';
import type { BodyMode, ExtraRoute, SocketRoute } from './route';
import { DEFAULT_MAX_BODY_BYTES, HttpError, isGone, pathOf, readBody, readJsonBody, sendError, sendNotFound } from './http';

// The route types live in ./route so that route modules (chat) need not import the server that mounts them.
export type { BodyMode, ExtraRoute, SimContext, SimHandler, SocketRoute } from './route';

export interface SimulatorOptions {
  /** Routes mounted after the built-in ones; an identical method+path replaces a built-in. */
  readonly routes?: readonly ExtraRoute[];
  /** WebSocket endpoints (a provider whose API is one), by exact path. */
  readonly sockets?: readonly SocketRoute[];
}

export interface Simulator {
  readonly server: http.Server;
  /** Registers a route, also after `listen()`. */
  addRoute(route: ExtraRoute): void;
  /** Registers a WebSocket endpoint, also after `listen()`; one of the same path is replaced. */
  addSocketRoute(route: SocketRoute): void;
  /** Listens (default: an ephemeral port on 127.0.0.1) and resolves the base URL, e.g. `http://127.0.0.1:PORT`. */
  listen(port?: number, host?: string): Promise<string>;
  /** Stops listening and drops every open connection, stalled streams included. */
  close(): Promise<void>;
}

export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const router = new Router();
  for (const route of [...chatRoutes(), ...gateRoutes()]) router.add(route);
  for (const route of options.routes ?? []) router.add(route);

  // Node's default 5 s keep-alive would race clients that reuse idle sockets a bit later
  // (undici's own default is 4 s); a longer timeout keeps the benchmark free of reconnects.
  const server = http.createServer({ keepAlive: true, noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => {
    void router.dispatch(req, res);
  });
  server.headersTimeout = 66_000;
  const sockets = new Map((options.sockets ?? []).map((route) => [route.path, route]));
  const upgrades = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  server.on('upgrade', (req, socket, head) => upgrade(sockets, upgrades, req, socket, head));

  return {
    server,
    addRoute: (route) => router.add(route),
    addSocketRoute: (route) => sockets.set(route.path, route),
    listen: (port = 0, host = '127.0.0.1') => listen(server, port, host),
    close: () => {
      // Upgraded connections are no longer the HTTP server's to close.
      for (const client of upgrades.clients) client.terminate();
      return close(server);
    },
  };
}

interface CompiledRoute {
  readonly route: ExtraRoute;
  readonly bodyMode: BodyMode;
  /** Path segments; `null` marks a `:name` segment (named in `paramNames`). */
  readonly segments: readonly (string | null)[];
  readonly paramNames: readonly string[];
}

class Router {
  /** Exact paths resolve with one map lookup: the chat hot path never scans patterns. */
  private readonly exact = new Map<string, CompiledRoute>();
  private readonly patterns: CompiledRoute[] = [];

  add(route: ExtraRoute): void {
    const method = route.method.toUpperCase();
    const compiled = compile({ ...route, method });
    if (compiled.paramNames.length === 0) {
      this.exact.set(`${method} ${route.path}`, compiled);
      return;
    }
    const same = this.patterns.findIndex((p) => p.route.method === method && p.route.path === route.path);
    if (same === -1) this.patterns.push(compiled);
    else this.patterns[same] = compiled;
  }

  async dispatch(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const path = pathOf(req);
    const found = this.match(method, path);
    if (!found) {
      req.resume(); // discard any body so the keep-alive connection stays usable
      sendNotFound(req, res);
      return;
    }
    try {
      await run(found.compiled, found.params, req, res);
    } catch (err) {
      fail(res, err);
    }
  }

  private match(method: string, path: string): { compiled: CompiledRoute; params: Record<string, string> } | undefined {
    const exact = this.exact.get(`${method} ${path}`);
    if (exact) return { compiled: exact, params: {} };
    const parts = path.split('/');
    for (const compiled of this.patterns) {
      if (compiled.route.method !== method) continue;
      const params = matchSegments(compiled, parts);
      if (params) return { compiled, params };
    }
    return undefined;
  }
}

function compile(route: ExtraRoute): CompiledRoute {
  const paramNames: string[] = [];
  const segments = route.path.split('/').map((segment) => {
    if (!segment.startsWith(':')) return segment;
    paramNames.push(segment.slice(1));
    return null;
  });
  const bodyMode = route.body ?? (['POST', 'PUT', 'PATCH'].includes(route.method) ? 'json' : 'none');
  return { route, bodyMode, segments, paramNames };
}

function matchSegments(compiled: CompiledRoute, parts: readonly string[]): Record<string, string> | undefined {
  if (parts.length !== compiled.segments.length) return undefined;
  const params: Record<string, string> = {};
  let p = 0;
  for (let i = 0; i < parts.length; i++) {
    const segment = compiled.segments[i];
    const part = parts[i]!;
    if (segment === null) {
      if (part === '') return undefined;
      params[compiled.paramNames[p++]!] = safeDecode(part);
    } else if (segment !== part) {
      return undefined;
    }
  }
  return params;
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

async function run(
  compiled: CompiledRoute,
  params: Record<string, string>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const maxBytes = compiled.route.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let body: unknown;
  let rawBody: Buffer | undefined;
  if (compiled.bodyMode === 'json') body = await readJsonBody(req, maxBytes);
  else if (compiled.bodyMode === 'raw') rawBody = await readBody(req, maxBytes);
  else req.resume();
  await compiled.route.handler({ req, res, params, query: queryOf(req), body, rawBody });
}

const EMPTY_QUERY = new URLSearchParams();

function queryOf(req: http.IncomingMessage): URLSearchParams {
  const url = req.url ?? '';
  const q = url.indexOf('?');
  // Most requests have no query string: share one empty instance rather than parse nothing.
  return q === -1 ? EMPTY_QUERY : new URLSearchParams(url.slice(q + 1));
}

/** Turns a failed request into an error answer, or drops the connection if the answer began. */
function fail(res: http.ServerResponse, err: unknown): void {
  if (isGone(res)) return;
  if (res.headersSent) {
    res.destroy(err instanceof Error ? err : undefined);
    return;
  }
  if (err instanceof HttpError) {
    // A 413 leaves an unread body behind: close the connection rather than read it all.
    if (err.status === 413) res.shouldKeepAlive = false;
    sendError(res, err.status, err.message, err.code, err.param);
    return;
  }
  sendError(res, 500, `Simulator error: ${err instanceof Error ? err.message : String(err)}`, 'internal_error');
}

/** An upgrade request: its endpoint's session, its refusal, or 404 for a path no endpoint has. */
function upgrade(sockets: ReadonlyMap<string, SocketRoute>, upgrades: WebSocketServer, req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
  // A client that resets the connection (during a refusal, or before the handshake ends) must
  // not take the simulator down: the socket's 'error' would otherwise have no listener.
  socket.on('error', () => socket.destroy());
  const route = sockets.get(pathOf(req));
  const refusal = route ? (route.refuse?.(req) ?? null) : { status: 404, body: { error: { message: 'no WebSocket endpoint at this path', code: 'not_found' } } };
  if (!route || refusal) {
    const body = JSON.stringify(refusal!.body);
    socket.end(`HTTP/1.1 ${refusal!.status} ${http.STATUS_CODES[refusal!.status] ?? ''}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    return;
  }
  upgrades.handleUpgrade(req, socket, head, (ws) => route.session(ws, req));
}

function listen(server: http.Server, port: number, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(baseUrl(server.address() as AddressInfo));
    });
  });
}

/** The URL a client on this machine uses: a wildcard address is reached through loopback. */
function baseUrl(address: AddressInfo): string {
  const ipv6 = address.family === 'IPv6';
  let host = address.address;
  if (host === '0.0.0.0') host = '127.0.0.1';
  else if (host === '::') host = '::1';
  return `http://${ipv6 ? `[${host}]` : host}:${address.port}`;
}

function close(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    // Idle keep-alive sockets and stalled streams would otherwise hold close() open for minutes.
    server.closeAllConnections();
  });
}
