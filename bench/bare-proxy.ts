import http from 'node:http';
import { Pool } from 'undici';

/**
 * The floor for any Node.js gateway on this machine: one process that reads the request, forwards
 * it to the upstream over an undici keep-alive pool and writes the answer back; no routing,
 * authentication, validation, ledger or logging. `npm run bench -- peer` runs it beside the others,
 * so the gateway's cost reads as what it adds above what Node.js itself costs.
 * Environment: BARE_PROXY_PORT, BARE_PROXY_UPSTREAM (the simulator's URL).
 */
const upstream = new Pool(process.env.BARE_PROXY_UPSTREAM!, { connections: 256 });

const server = http.createServer(async (req, res) => {
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await upstream.request({ method: 'POST', path: req.url ?? '/', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
    const body = Buffer.from(await answer.body.arrayBuffer());
    res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  } catch (err) {
    res.writeHead(502).end(String(err));
  }
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.BARE_PROXY_PORT), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => void upstream.close()));
