import type { Pool } from 'pg';
import { auditRunMigrations } from './audit-runs/schema';
import type { Config } from './config';
import { EventStoreDbEventStore } from './eventstore/eventstoredb/store';
import type { EventStore } from './eventstore/port';
import { eventStoreMigrations } from './eventstore/postgres/schema';
import { PostgresEventStore } from './eventstore/postgres/store';
import { runtimeMigrations } from './projections-runtime/schema';

/** Every schema migration of the gateway's own tables; the gateway and the CLI tools apply them. */
export const ALL_MIGRATIONS = [...eventStoreMigrations, ...runtimeMigrations, ...auditRunMigrations];

/** The event store CONFIG selects: PostgreSQL (the default) or EventStoreDB. */
export function createEventStore(config: Config, pool: Pool): EventStore {
  return config.eventStore === 'eventstoredb'
    ? new EventStoreDbEventStore({ connectionString: config.esdbConnectionString! })
    : new PostgresEventStore({ pool, pollIntervalMs: config.subscriptionPollMs });
}
