import { startObjectStore } from './object-store';

/**
 * s3rver as a process of its own, for tests that run it on another host (a network namespace):
 *   node -r tsx/cjs test/support/object-store-process.ts <address> <port> <bucket>...
 * prints one JSON line {"endpoint": ..., "env": {FILE_STORE, S3_*}} once it listens (env for the
 * first bucket), and stops on SIGTERM or SIGINT, removing its data.
 */
async function main(): Promise<void> {
  const [address = '127.0.0.1', port = '0', ...buckets] = process.argv.slice(2);
  const store = await startObjectStore(buckets, { address, port: Number(port) });
  process.stdout.write(JSON.stringify({ endpoint: store.endpoint, env: buckets[0] ? store.env(buckets[0]) : null }) + '\n');
  // startObjectStore unrefs its server (a test process must be able to exit): this process lives on it.
  const alive = setInterval(() => undefined, 60_000);
  const stop = () => {
    clearInterval(alive);
    void store.close();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
