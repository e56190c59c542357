import { allProjections } from '../../projections';
import { loadConfig, type Config } from '../config';
import { openDatabase, type Database } from '../db/database';
import type { EventStore } from '../eventstore/port';
import { createEventStore, prepareSchema } from '../storage';
import { createLogger, type Logger } from '../log';

export interface CliContext {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Database;
  readonly store: EventStore;
  close(): Promise<void>;
}

/** The same database and event store the gateway uses, from the same environment variables. */
export async function openCliContext(): Promise<CliContext> {
  const config = loadConfig();
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn', process.stderr as never);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, embeddedPort: config.embeddedPgPort, logger, role: 'tool' });
  await prepareSchema(db.pool, allProjections);
  const store = createEventStore(config, db.pool);
  return {
    config,
    logger,
    db,
    store,
    async close() {
      await store.close();
      await db.close();
    },
  };
}
