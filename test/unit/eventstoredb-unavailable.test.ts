import { expect } from 'chai';
import { DatabaseUnavailableError, isDatabaseUnavailable } from '../../src/db/unavailable';
import { EventStoreDbEventStore } from '../../src/eventstore/eventstoredb/store';
import { closedPort } from '../support/closed-port';

describe('the EventStoreDB adapter with its server out of reach', () => {
  it('throws DatabaseUnavailableError, so the gateway answers 503 and journals settlements as for PostgreSQL', async () => {
    const store = new EventStoreDbEventStore({ connectionString: `kurrentdb://127.0.0.1:${await closedPort()}?tls=false&defaultDeadline=2000` });
    try {
      const failures = await Promise.all([
        store.append('account-x', [{ type: 'Test', data: {} }], { expectedVersion: 'any' }).catch((err: unknown) => err),
        store.readStream('account-x').catch((err: unknown) => err),
        store.readAll(null, 10).catch((err: unknown) => err),
      ]);
      for (const err of failures) {
        expect(err, String(err)).to.be.instanceOf(DatabaseUnavailableError);
        expect(isDatabaseUnavailable(err)).to.equal(true);
      }
    } finally {
      await store.close();
    }
  });
});
