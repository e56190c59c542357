import { ConfigError, loadConfig } from './config';
import { DataDirInUseError } from './db/database';
import { createLogger } from './log';
import { startGateway } from './gateway';
import { defaultFeatures } from './features';
// The entry point is the one module of src/ that knows the simulator (test/unit/simulator-boundary).
import { startSimulator, type RunningSimulator } from '../simulator';

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  // The simulator serves the channels CHANNELS leaves out (all, when it is unset); it starts only if one is left out.
  let simulator: RunningSimulator | null = null;
  const fallbackUpstream = async (): Promise<string> => {
    simulator ??= await startSimulator();
    logger.info({ url: simulator.url, providers: simulator.providers.map((p) => p.baseUrl) }, 'upstream simulator started: it serves the channels CHANNELS leaves out');
    return simulator.url;
  };
  const gateway = await startGateway(config, { logger, features: defaultFeatures(), fallbackUpstream }).catch(async (err: unknown) => {
    await simulator?.close();
    throw err;
  });
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    gateway.close().then(
      async () => {
        await simulator?.close();
        logger.info('gateway stopped');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGHUP', () => {
    try {
      logger.info(gateway.catalog.reload(), 'catalog reloaded');
    } catch (err) {
      logger.error({ err }, 'catalog reload failed; the previous catalog stays in force');
    }
  });
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  // A setting or a DATA_DIR the operator has to fix: the message says what, a stack trace would bury it.
  console.error(err instanceof ConfigError || err instanceof DataDirInUseError ? `${err.name}: ${err.message}` : err);
  process.exit(1);
});
