/**
 * Standalone upstream simulator (`npm run simulator`): every simulated provider API in one process,
 * for pointing a gateway at with CHANNELS (see channelsServedBy) and for benchmarks. SIMULATOR_PORT (default 8090) and HOST (default 127.0.0.1).
 */
import pino from 'pino';
import { startSimulator } from './index';

const logger = pino({ name: 'upstream-simulator' });

function portFromEnv(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`SIMULATOR_PORT is not a port: ${value}`);
  return port;
}

async function main(): Promise<void> {
  const simulator = await startSimulator({ port: portFromEnv(process.env['SIMULATOR_PORT'], 8090), host: process.env['HOST'] || '127.0.0.1' });
  logger.info({ url: simulator.url }, 'upstream simulator listening');
  for (const provider of simulator.providers) logger.info({ protocol: provider.protocol, base_url: provider.baseUrl }, `simulated provider: ${provider.title}`);

  let closing = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    // A second signal while closing means "now": do not wait for the first close.
    if (closing) process.exit(1);
    closing = true;
    logger.info({ signal }, 'upstream simulator closing');
    simulator.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'upstream simulator close failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  logger.fatal({ err }, 'upstream simulator failed to start');
  process.exit(1);
});
