import { expect } from 'chai';
import { apiKeysProjection } from '../../projections/api-keys';
import { ddlHash } from '../../src/projections-runtime/tables';

/**
 * `api_keys` is the table every request is authenticated against. A gateway that finds a
 * projection's DDL hash changed drops its tables and refolds them from the log
 * (ensureProjectionTables), and in the meantime every process of the fleet, old ones included,
 * refuses each key it has not cached (all of them, in a process just started) with 401, counted
 * towards the address lockout. So its definition must not change by accident: a new per-key figure
 * belongs in a read model of its own (as the lifetime spend does: request_log's `actor_spend`). If
 * it must change, change this hash knowingly and plan the upgrade's outage.
 */
describe('the api_keys read model', () => {
  it('keeps the DDL hash the deployed gateways recorded (its definition since commit cfee5f1)', () => {
    expect(ddlHash(apiKeysProjection)).to.equal('1de4e45d7d45f9dd80081e5d89199fe0b2749b3c5524ce6d23566f7c3713ca34');
  });

  it('is not rebuilt for handling another event: only the DDL is hashed', () => {
    const narrower = { ...apiKeysProjection, eventTypes: new Set(['ApiKeyIssued']) };
    expect(ddlHash(narrower)).to.equal(ddlHash(apiKeysProjection));
  });
});
