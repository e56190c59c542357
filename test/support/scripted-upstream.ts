import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { closedPort } from './closed-port';

/**
 * What a scripted upstream does with one request: answer it with a status of its own (an error
 * body in OpenAI's shape unless given), pass it to the real upstream behind it, or hang up without
 * answering (the connection breaks after the request was written).
 */
export type UpstreamAct = { readonly status: number; readonly headers?: Record<string, string>; readonly body?: unknown } | 'forward' | 'hang-up';

export interface ScriptedUpstream {
  /** `http://127.0.0.1:PORT`; a channel's base URL is this plus the path the real upstream serves under. */
  readonly url: string;
  /** Requests received (every act counts). */
  readonly seen: number;
  /** What to do with each next request (until changed). */
  act: UpstreamAct | ((n: number) => UpstreamAct);
  close(): Promise<void>;
}

/** An HTTP front to `target` (the simulator) that a test scripts per channel: the failures of one provider. */
export async function scriptedUpstream(target: string, act: ScriptedUpstream['act'] = 'forward'): Promise<ScriptedUpstream> {
  let seen = 0;
  const state = { act };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const n = seen++;
      const chosen = typeof state.act === 'function' ? state.act(n) : state.act;
      if (chosen === 'hang-up') return void req.socket.destroy();
      if (chosen === 'forward') return void forward(target, req, Buffer.concat(chunks), res);
      const body = chosen.body ?? { error: { message: `scripted ${chosen.status}`, type: 'server_error', param: null, code: null } };
      res.writeHead(chosen.status, { 'content-type': 'application/json', ...chosen.headers }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get seen() {
      return seen;
    },
    get act() {
      return state.act;
    },
    set act(next) {
      state.act = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function forward(target: string, req: http.IncomingMessage, body: Buffer, res: http.ServerResponse): Promise<void> {
  const { host: _host, connection: _connection, ...headers } = req.headers;
  try {
    const answer = await request(`${target}${req.url}`, { method: req.method as 'POST', headers: headers as Record<string, string>, body: body.length > 0 ? body : undefined });
    res.writeHead(answer.statusCode, answer.headers as http.OutgoingHttpHeaders);
    for await (const chunk of answer.body) res.write(chunk);
    res.end();
  } catch {
    res.destroy();
  }
}

/** A base URL nothing listens on: a port taken and given back (a connection to it is refused). */
export async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`;
}
