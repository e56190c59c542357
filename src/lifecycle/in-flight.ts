import http from 'node:http';

/**
 * The requests this process is still handling, for a shutdown that lets them finish. A request
 * counts until its handler's promise settles, not until its response ends: a streamed answer
 * whose client was cut off still settles what it delivered after its socket closed.
 */
export class InFlightRequests {
  private readonly running = new Set<Promise<unknown>>();
  private draining = false;

  /** A request listener that counts each call of `handle` until the promise it returns settles. */
  track(handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<unknown>): http.RequestListener {
    return (req, res) => {
      // Once shutting down, a keep-alive connection closes after this answer instead of bringing more.
      if (this.draining) res.setHeader('connection', 'close');
      const work = handle(req, res).catch(() => undefined);
      this.running.add(work);
      void work.finally(() => this.running.delete(work));
    };
  }

  get count(): number {
    return this.running.size;
  }

  /** Marks the start of the shutdown; the requests already running go on. */
  startDraining(): void {
    this.draining = true;
  }

  /** True once no request runs, false if some still run after `timeoutMs`. */
  async drained(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.running.size > 0) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.running]), new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
    return true;
  }
}

/**
 * Binds the port before anything else starts, so a taken port fails the start at once instead of
 * after the database, consumers and workers are up. Requests that arrive before `serve` wait for it.
 */
export async function bindPort(port: number, host: string): Promise<{ server: http.Server; serve(listener: http.RequestListener): void }> {
  const waiting: [http.IncomingMessage, http.ServerResponse][] = [];
  let handle: http.RequestListener = (req, res) => void waiting.push([req, res]);
  const server = http.createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    server,
    serve(listener) {
      handle = listener;
      for (const [req, res] of waiting.splice(0)) listener(req, res);
    },
  };
}
