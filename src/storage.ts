import type { Pool } from 'pg';
import { AUDIT_REPLAY_SCHEMA } from './audit/audit';
import { keptConversationMigrations } from './agents/webqa/kept-conversations';
import { limitStoreMigrations } from './limits/postgres-store';
import { migrate } from './db/migrations';
import { auditRunMigrations } from './audit-runs/schema';
import type { Config } from './config';
import type { EventStore } from './eventstore/port';
import { eventStoreMigrations } from './eventstore/postgres/schema';
import { PostgresEventStore } from './eventstore/postgres/store';
import type { Projection } from './projections-runtime/consumer';
import { READ_MODEL_SCHEMA } from './projections-runtime/consumer';
import { runtimeMigrations } from './projections-runtime/schema';
import { ensureProjectionTables } from './projections-runtime/tables';

/** Every schema migration of the gateway's own tables; the gateway and the CLI tools apply them. */
export const ALL_MIGRATIONS = [...eventStoreMigrations, ...runtimeMigrations, ...auditRunMigrations, ...keptConversationMigrations, ...limitStoreMigrations];

/**
 * Brings a database to the schema this code expects: the migrations, then the read models' tables,
 * live and the audit's (empty) copies.
 */
export async function prepareSchema(pool: Pool, projections: readonly Projection[]): Promise<void> {
  await migrate(pool, ALL_MIGRATIONS);
  await ensureProjectionTables(pool, projections, READ_MODEL_SCHEMA);
  await ensureProjectionTables(pool, projections, AUDIT_REPLAY_SCHEMA);
}

/**
 * The event store CONFIG selects: PostgreSQL (the default) or EventStoreDB. The EventStoreDB client
 * (gRPC, protobuf) is loaded only when selected: it is most of what a process loads at start.
 */
export function createEventStore(config: Config, pool: Pool): EventStore {
  if (config.eventStore !== 'eventstoredb') return new PostgresEventStore({ pool, pollIntervalMs: config.subscriptionPollMs, batchWindowMs: config.subscriptionBatchMs });
  // A require, not import(): the CommonJS loaders of tsx and mocha see it, and it stays synchronous.
  const { EventStoreDbEventStore } = require('./eventstore/eventstoredb/store') as typeof import('./eventstore/eventstoredb/store');
  return new EventStoreDbEventStore({ connectionString: config.esdbConnectionString! });
}
