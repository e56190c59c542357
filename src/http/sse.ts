import type { ServerResponse } from 'node:http';
import type { GatewayContext } from './context';

/**
 * A text/event-stream answer written straight to the socket (Koa steps aside), with `: ping`
 * comments while idle, backpressure, and a signal that fires when the client goes away.
 */
export class SseResponse {
  private readonly res: ServerResponse;
  private readonly controller = new AbortController();
  private ping: NodeJS.Timeout | null = null;
  private ended = false;
  /** Whether the first frame has been sent on its way. */
  private flushed = false;

  constructor(ctx: GatewayContext, private readonly pingMs: number) {
    ctx.respond = false;
    ctx.status = 200;
    this.res = ctx.res;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    // A client that left before this answer began (while the upstream was being asked) has
    // already closed the response: its 'close' will not come again, so the signal fires now.
    if (this.res.destroyed) {
      this.controller.abort();
      return;
    }
    this.res.on('close', () => {
      if (!this.ended) this.controller.abort();
      this.stopPing();
    });
    this.schedulePing();
  }

  /** Aborted when the client disconnects before the stream ended. */
  get clientGone(): AbortSignal {
    return this.controller.signal;
  }

  /** `data: <json>` */
  data(payload: unknown): Promise<void> {
    return this.write(`data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`);
  }

  /** `event: <type>` + `data: <json>` */
  event(type: string, payload: unknown): Promise<void> {
    return this.write(`event: ${type}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.stopPing();
    this.res.end();
  }

  private async write(frame: string): Promise<void> {
    if (this.ended || this.res.destroyed) return;
    this.schedulePing();
    const written = this.res.write(frame);
    if (!this.flushed) {
      // Node corks the socket on a write until the end of the tick, so that a burst of writes goes
      // out in one packet. The first frame is the client's first byte: it must not wait while the
      // same tick relays the rest of a burst the upstream sent at once, or dispatches the settle.
      this.flushed = true;
      this.res.socket?.uncork();
    }
    if (!written) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.res.off('drain', done);
          this.res.off('close', done);
          resolve();
        };
        this.res.once('drain', done);
        this.res.once('close', done);
      });
    }
  }

  private schedulePing(): void {
    this.stopPing();
    this.ping = setTimeout(() => {
      void this.write(': ping\n\n');
    }, this.pingMs);
    this.ping.unref();
  }

  private stopPing(): void {
    if (this.ping) clearTimeout(this.ping);
    this.ping = null;
  }
}
