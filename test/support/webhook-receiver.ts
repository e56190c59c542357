import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

/** A webhook receiver on loopback whose answers a test scripts. */
export class Receiver {
  readonly received: Received[] = [];
  private server!: Server;
  url = '';
  /** Status per call in order; beyond the list, the last entry. 'hang' never answers. */
  script: (number | 'hang')[] = [200];

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const step = this.script[Math.min(this.received.length - 1, this.script.length - 1)]!;
        if (step === 'hang') return;
        res.writeHead(step).end('ok');
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}
