import type { ServerResponse } from 'node:http';

/** Answers a simulated provider file download. */
export function sendBytes(res: ServerResponse, contentType: string, bytes: Buffer): void {
  res.writeHead(200, { 'content-type': contentType, 'content-length': bytes.length });
  res.end(bytes);
}

/** The simulator's own origin as the client reached it, for the URLs it hands out. */
export function originOf(headers: { host?: string }): string {
  return `http://${headers.host ?? '127.0.0.1'}`;
}
