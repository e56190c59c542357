import net from 'node:net';

/**
 * A TCP relay in front of a server (the test's PostgreSQL), which a test cuts to take the server
 * away from a gateway without stopping it for the other suites: `cut()` drops every connection
 * and refuses new ones (as a server that went down), `restore()` relays again.
 */
export interface TcpProxy {
  readonly port: number;
  /** Drops every relayed connection and resets each new one until `restore()`. */
  cut(): void;
  /** Relays nothing more, answering nothing, until `restore()`: a network that drops packets. */
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let cut = false;
  let silent = false;
  const server = net.createServer((client) => {
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    if (silent) {
      // Taken in, then never answered.
      open.add(client);
      client.on('error', () => client.destroy());
      return;
    }
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      cut = true;
      for (const socket of open) socket.resetAndDestroy();
      open.clear();
    },
    blackhole() {
      silent = true;
      for (const socket of open) socket.pause();
    },
    restore() {
      cut = false;
      silent = false;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Where a PostgreSQL URL's server listens over TCP (the embedded server also has a Unix socket, named by `?host=`). */
export function tcpTargetOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 5432) };
}

/** `url` reaching its server through the proxy (over TCP, never the Unix socket). */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const parsed = new URL(url);
  parsed.hostname = '127.0.0.1';
  parsed.port = String(proxy.port);
  parsed.searchParams.delete('host');
  return parsed.toString();
}
