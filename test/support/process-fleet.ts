import fs from 'node:fs';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { tempDir, type Database } from '../../src/db/database';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { channelsServedBy } from '../../src/upstreams/registry';
import { allSimulatorRoutes } from '../../simulator/all-routes';
import { createSimulator, type Simulator } from '../../simulator/server';
import { createTestDatabase } from './database';
import { startGatewayProcess, type GatewayProcess } from './gateway-process';

/** What gateway processes of one test share: a database with the schema, the simulator serving every channel, a data directory. */
export interface ProcessFleet {
  readonly database: Database;
  readonly simulator: Simulator;
  readonly dataDir: string;
  readonly gateways: GatewayProcess[];
  /** Starts a gateway process on this ground, with `env` over the ground's own (database, data directory, admin token, channels). */
  start(name: string, env?: Record<string, string>): Promise<GatewayProcess>;
  /** Stops every gateway started, then the simulator, the database and the data directory. */
  close(): Promise<void>;
}

export async function startProcessFleet(name: string, adminToken: string): Promise<ProcessFleet> {
  const database = await createTestDatabase(20, { withSchema: true });
  const simulator = createSimulator({ routes: allSimulatorRoutes() });
  const simulatorUrl = await simulator.listen(0, '127.0.0.1');
  const dataDir = tempDir(`gateway-${name}-`);
  const ground = {
    DATABASE_URL: database.url,
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    URL_SIGNING_SECRET: `${name}-signing-secret`,
    CHANNELS: JSON.stringify(channelsServedBy(simulatorUrl, new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), { timeoutMs: 30_000, maxConcurrency: 64 })),
  };
  const gateways: GatewayProcess[] = [];
  return {
    database,
    simulator,
    dataDir,
    gateways,
    async start(gatewayName, env = {}) {
      const gateway = await startGatewayProcess(gatewayName, { ...ground, ...env });
      gateways.push(gateway);
      return gateway;
    },
    async close() {
      await Promise.all(gateways.map((g) => g.stop()));
      await simulator.close();
      await database.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
