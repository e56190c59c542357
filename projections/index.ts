import type { Projection } from '../src/projections-runtime/consumer';
import { accountsProjection } from './accounts';
import { apiKeysProjection } from './api-keys';
import { assetGroupsProjection } from './asset-groups';
import { balancesProjection } from './balances';
import { channelsProjection } from './channels';
import { filesProjection } from './files';
import { galleryProjection } from './gallery';
import { ledgerProjection } from './ledger';
import { requestLogProjection } from './request-log';
import { riskReportsProjection } from './risk-reports';
import { storedResponsesProjection } from './stored-responses';
import { searchCacheProjection } from './search-cache';
import { tasksProjection } from './tasks';
import { usageProjection } from './usage';

/**
 * Every read model of the gateway, the features' included; each can be dropped and rebuilt from
 * the log, and `npm run audit` replays them all.
 */
export const allProjections: readonly Projection[] = [
  accountsProjection,
  balancesProjection,
  ledgerProjection,
  apiKeysProjection,
  tasksProjection,
  galleryProjection,
  filesProjection,
  riskReportsProjection,
  searchCacheProjection,
  assetGroupsProjection,
  usageProjection,
  storedResponsesProjection,
  channelsProjection,
  requestLogProjection,
];
