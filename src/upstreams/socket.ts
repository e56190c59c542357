import type { IncomingHttpHeaders } from 'node:http';
import { WebSocket } from 'ws';
import { UpstreamError } from './errors';
import type { WireSocket } from './wire';

/**
 * A channel's WebSocket client (the `ws` package, not undici's WebSocket: a provider that refuses
 * the upgrade says why in the HTTP answer, a refused key included, and undici's WebSocket hides
 * that answer behind a bare error event). Channel.open applies the channel's authentication.
 */

/** A refused upgrade as the provider answered it (Channel.open turns it into a WireAnswer). */
export interface SocketRefusal {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Uint8Array;
}

/** Enough of a refusal's body for its error message; the rest is not read. */
const MAX_REFUSAL_BYTES = 64 * 1024;

/**
 * Opens `url` with `headers`; `timeoutMs` bounds the handshake. Resolves the open socket or the
 * provider's refusal; rejects with the connection's error (Channel.open maps it), an
 * UpstreamError `timeout`, or the signal's reason.
 */
export function openSocket(url: string, headers: Record<string, string>, timeoutMs: number, channel: string, signal?: AbortSignal): Promise<{ socket: WireSocket } | { refusal: SocketRefusal }> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const ws = new WebSocket(url, { headers, perMessageDeflate: false, followRedirects: false });
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      outcome();
    };
    const fail = (err: unknown) => {
      ws.terminate();
      settle(() => reject(err));
    };
    const onAbort = () => fail(signal!.reason);
    const timer = setTimeout(() => fail(new UpstreamError(0, `channel ${channel} timed out opening its WebSocket`, 'upstream_timeout', 'timeout')), timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    // After the outcome an error only closes the socket: a listener must stay, or it would be thrown.
    ws.on('error', (err) => fail(err));
    ws.once('unexpected-response', (request, response) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      const done = () => {
        request.destroy();
        settle(() => resolve({ refusal: { status: response.statusCode ?? 0, headers: response.headers, body: new Uint8Array(Buffer.concat(chunks)) } }));
      };
      response.on('data', (chunk: Buffer) => {
        if (bytes >= MAX_REFUSAL_BYTES) return;
        chunks.push(chunk.subarray(0, MAX_REFUSAL_BYTES - bytes));
        bytes += chunk.length;
      });
      response.once('end', done);
      response.once('error', done);
      response.once('close', done);
    });
    ws.once('open', () => settle(() => resolve({ socket: new OpenSocket(ws, timeoutMs, channel, signal) })));
  });
}

/** An open connection whose messages wait in a queue until read. */
class OpenSocket implements WireSocket {
  private readonly queue: Uint8Array[] = [];
  private closed = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly ws: WebSocket,
    private readonly timeoutMs: number,
    private readonly channel: string,
    private readonly signal: AbortSignal | undefined,
  ) {
    ws.on('message', (data: Buffer) => {
      this.queue.push(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      this.notify();
    });
    ws.on('close', () => {
      this.closed = true;
      this.forgetSignal();
      this.notify();
    });
    // An error is followed by `close`; the reader learns of it as the connection's end.
    ws.on('error', () => undefined);
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  private readonly onAbort = (): void => {
    this.ws.terminate();
    this.notify();
  };

  /** One signal may outlive many connections (a synthesis's resumptions): none keeps a listener on it once closed. */
  private forgetSignal(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async next(): Promise<Uint8Array | null> {
    for (;;) {
      this.signal?.throwIfAborted();
      const message = this.queue.shift();
      if (message) return message;
      if (this.closed) return null;
      const arrived = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), this.timeoutMs);
        this.wake = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      if (!arrived) {
        this.ws.terminate();
        throw new UpstreamError(0, `channel ${this.channel} sent nothing for ${this.timeoutMs} ms`, 'upstream_timeout', 'timeout');
      }
    }
  }

  send(message: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      this.ws.send(message, { binary: true }, (err) => {
        if (err) reject(new UpstreamError(0, `channel ${this.channel}: the WebSocket broke while sending: ${err.message}`, 'upstream_unreachable', 'network'));
        else resolve();
      });
    });
  }

  close(): void {
    // The closing handshake may take a while; the reader has left already.
    this.forgetSignal();
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
    else this.ws.terminate();
  }
}
