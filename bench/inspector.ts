import fs from 'node:fs';
import WebSocket from 'ws';

/**
 * The V8 inspector of another Node process (started with `--inspect=127.0.0.1:PORT`), for what
 * only the process itself can do: collect its garbage before its heap is read, and write a heap
 * snapshot. The gateway needs no code for it, and a bench reads a heap that holds live objects
 * only, not whatever garbage the last collection left (up to a young generation of 32 MB).
 */

export interface ProcessMemory {
  readonly rss: number;
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
}

export interface Inspector {
  /** A full garbage collection, then the process's `process.memoryUsage()`, bytes. */
  memoryAfterGc(): Promise<ProcessMemory>;
  /** Writes a heap snapshot (`.heapsnapshot`, open it in Chrome DevTools) to `file`. */
  heapSnapshot(file: string): Promise<void>;
  close(): Promise<void>;
}

interface Reply {
  readonly id?: number;
  readonly method?: string;
  readonly params?: { readonly chunk?: string };
  readonly result?: { readonly result?: { readonly value?: unknown } };
  readonly error?: { readonly message: string };
}

export async function connectInspector(port: number): Promise<Inspector> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target on port ${port}`);
  // Snapshot chunks arrive as messages; the default 100 MB limit is about one message's worth.
  const socket = new WebSocket(url, { maxPayload: 1024 * 1024 * 1024 });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let nextId = 0;
  const waiting = new Map<number, { resolve: (reply: Reply) => void; reject: (err: Error) => void }>();
  let onChunk: ((chunk: string) => void) | null = null;
  socket.on('message', (data: Buffer) => {
    const reply = JSON.parse(data.toString('utf8')) as Reply;
    if (reply.method === 'HeapProfiler.addHeapSnapshotChunk') onChunk?.(reply.params?.chunk ?? '');
    if (reply.id === undefined) return;
    const pending = waiting.get(reply.id);
    waiting.delete(reply.id);
    if (reply.error) pending?.reject(new Error(reply.error.message));
    else pending?.resolve(reply);
  });
  socket.on('close', () => {
    for (const pending of waiting.values()) pending.reject(new Error('the inspector closed'));
    waiting.clear();
  });
  const send = (method: string, params: object = {}): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      waiting.set(id, { resolve, reject });
      socket.send(JSON.stringify({ id, method, params }));
    });

  return {
    async memoryAfterGc() {
      await send('HeapProfiler.collectGarbage');
      const reply = await send('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
      return JSON.parse(String(reply.result?.result?.value)) as ProcessMemory;
    },
    async heapSnapshot(file) {
      const out = fs.createWriteStream(file);
      onChunk = (chunk) => out.write(chunk);
      try {
        await send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
      } finally {
        onChunk = null;
        await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
      }
    },
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return;
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.close();
      await closed;
    },
  };
}
