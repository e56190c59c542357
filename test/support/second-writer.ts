import { AccountService } from '../../src/accounts/service';
import { accountDecider } from '../../src/domain/account/decider';
import { CommandHandler } from '../../src/domain/command-handler';
import { PostgresSnapshotStore } from '../../src/eventstore/postgres/snapshots';
import type { TestGateway } from './gateway';

/**
 * Accounts as another gateway process would write them: a command handler with its own cache and
 * queue on the same store, so the two race through optimistic concurrency on the same streams.
 */
export function secondWriter(gw: TestGateway): AccountService {
  return new AccountService(new CommandHandler(gw.store, new PostgresSnapshotStore(gw.pool), accountDecider, gw.logger), gw.pool, gw.progress, { projectionWaitMs: 5000 });
}
