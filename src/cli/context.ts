import { allProjections } from '../../projections';
import { loadConfig, type Config } from '../config';
import { openDatabase, type Database } from '../db/database';
import { migrate } from '../db/migrations';
import type { EventStore } from '../eventstore/port';
import { ALL_MIGRATIONS, createEventStore } from '../storage';
import { createLogger, type Logger } from '../log';
import { READ_MODEL_SCHEMA } from '../projections-runtime/consumer';
import { ensureProjectionTables } from '../projections-runtime/tables';

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
  await migrate(db.pool, ALL_MIGRATIONS);
  await ensureProjectionTables(db.pool, allProjections, READ_MODEL_SCHEMA);
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
