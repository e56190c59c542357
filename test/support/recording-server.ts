import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as a test server received it, its body read whole. */
export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: Buffer;
}

export interface RecordingServer {
  /** `http://HOST:PORT` */
  readonly url: string;
  /** Every request received, in order. */
  readonly seen: RecordedRequest[];
  close(): Promise<void>;
}

/** An HTTP server on an ephemeral port of `host` that records each request and answers it as `answer` says. */
export async function recordingServer(answer: (request: RecordedRequest, res: http.ServerResponse) => void, host = '127.0.0.1'): Promise<RecordingServer> {
  const seen: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
      seen.push(request);
      answer(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
