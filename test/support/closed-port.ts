import net from 'node:net';

/**
 * A port nothing listens on, for as long as a test needs it: port 1 (tcpmux), a privileged port no
 * service of this machine kind opens. A port a server held a moment ago is no such thing: in a
 * parallel suite another test's server may be given it (a test's "dead" channel once answered from
 * someone's server under load). Checked once: a connection must be refused.
 */
export async function closedPort(): Promise<number> {
  refused ??= refusedConnection();
  await refused;
  return CLOSED_PORT;
}

const CLOSED_PORT = 1;

let refused: Promise<void> | null = null;

function refusedConnection(): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(CLOSED_PORT, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      reject(new Error(`something listens on 127.0.0.1:${CLOSED_PORT}: the tests need a port nothing listens on`));
    });
    socket.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNREFUSED' ? resolve() : reject(err)));
  });
}
