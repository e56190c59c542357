import { expect } from 'chai';
import { Pool } from 'pg';
import { loadConfig } from '../../src/config';
import { EventStoreDbEventStore } from '../../src/eventstore/eventstoredb/store';
import { PostgresEventStore } from '../../src/eventstore/postgres/store';
import { createEventStore } from '../../src/storage';

describe('EVENT_STORE selects the event store (the EventStoreDB client loaded only then)', () => {
  // Neither store connects until used: nothing here reaches a server.
  const pool = new Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
  after(() => pool.end());

  it('PostgreSQL by default', async () => {
    const store = createEventStore(loadConfig({}), pool);
    expect(store).to.be.instanceOf(PostgresEventStore);
    await store.close();
  });

  it('EventStoreDB with EVENT_STORE=eventstoredb and its connection string', async () => {
    const store = createEventStore(loadConfig({ EVENT_STORE: 'eventstoredb', ESDB_CONNECTION_STRING: 'kurrentdb://127.0.0.1:1?tls=false' }), pool);
    expect(store).to.be.instanceOf(EventStoreDbEventStore);
    await store.close();
  });
});
