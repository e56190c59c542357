import fs from 'node:fs';
import { allProjections } from '../../../projections';
import { createPool } from '../../../src/db/database';
import { startEmbeddedServer, type EmbeddedServer } from '../../../src/db/embedded-postgres';
import { createLogger } from '../../../src/log';
import { prepareSchema } from '../../../src/storage';
import { loggedUrl, startGatewayProcess, startLoggingProcess, type GatewayProcess } from '../gateway-process';
import { testTempDir } from '../temp-dirs';
import { HostNetwork, type Host, type HostSpec } from './hosts';

/** The fleet's hosts and their last octets; `objects` is the object-store host. */
export const FLEET_HOSTS = {
  db: 2,
  objects: 3,
  provider1: 11,
  provider2: 12,
  gw1: 21,
  gw2: 22,
  gw3: 23,
} as const;
export type FleetHostName = keyof typeof FLEET_HOSTS;
export const GATEWAY_HOSTS = ['gw1', 'gw2', 'gw3'] as const satisfies readonly FleetHostName[];
export const PROVIDER_HOSTS = ['provider1', 'provider2'] as const satisfies readonly FleetHostName[];

const POSTGRES_PORT = 5432;
const SIMULATOR_PORT = 8090;
const OBJECT_STORE_PORT = 9000;

/**
 * PostgreSQL's side of a partition: a client host cut off never says goodbye, and its sessions, with
 * their advisory locks (the consumer leases), would live until the kernel's two-hour keep-alive
 * gave them up. These settings end such a session within about ten seconds, so that another
 * gateway takes its consumers over; a production database should have the same
 * (docs/operations.md, "Multi-host topology").
 */
export const PARTITION_AWARE_POSTGRES_SETTINGS = {
  tcp_keepalives_idle: '2',
  tcp_keepalives_interval: '1',
  tcp_keepalives_count: '3',
  tcp_user_timeout: '5000',
} as const;

export class Fleet {
  private readonly gateways = new Map<string, GatewayProcess>();
  /** The other programs on the hosts: simulators, the object store. */
  private readonly providers = new Map<string, GatewayProcess>();
  private database: EmbeddedServer | null = null;

  private constructor(readonly network: HostNetwork) {}

  /** Builds the hosts; nothing runs in them yet. */
  static async build(): Promise<Fleet> {
    const specs: HostSpec[] = Object.entries(FLEET_HOSTS).map(([name, octet]) => ({ name, octet }));
    return new Fleet(await HostNetwork.build(specs));
  }

  host(name: FleetHostName): Host {
    return this.network.host(name);
  }

  /** PostgreSQL on the database host, listening on its address only, with the gateway's schema; answers its URL. */
  async startDatabase(): Promise<string> {
    const dir = testTempDir('gateway-fleet-pg-');
    // The server runs as the `postgres` system user, which must reach its directory.
    fs.chmodSync(dir, 0o755);
    const host = this.host('db');
    this.database = await startEmbeddedServer({
      dir: `${dir}/data`,
      port: POSTGRES_PORT,
      logger: createLogger('silent'),
      listenAddress: host.address,
      networkNamespace: host.namespace,
      clientNetwork: `${this.network.subnet}.0/24`,
      settings: PARTITION_AWARE_POSTGRES_SETTINGS,
    });
    const pool = createPool(this.database.url, 2);
    try {
      await prepareSchema(pool, allProjections);
    } finally {
      await pool.end();
    }
    return this.database.url;
  }

  /** The upstream simulator (every simulated provider) on a provider host; answers its URL. */
  async startProvider(name: (typeof PROVIDER_HOSTS)[number]): Promise<string> {
    const host = this.host(name);
    const simulator = await startLoggingProcess(name, ['simulator/main.ts'], { HOST: host.address, SIMULATOR_PORT: String(SIMULATOR_PORT) }, loggedUrl('upstream simulator listening'), {
      launcher: host.launcher,
    });
    this.providers.set(name, simulator);
    return simulator.url;
  }

  providerUrl(name: (typeof PROVIDER_HOSTS)[number]): string {
    const provider = this.providers.get(name);
    if (!provider) throw new Error(`${name} runs no simulator`);
    return provider.url;
  }

  /**
   * An S3-compatible server (s3rver) on the object-store host with one bucket; answers the gateway
   * settings (FILE_STORE=s3, S3_*) that keep files there. Runs test/support/object-store-process.ts.
   */
  async startObjectStore(bucket: string): Promise<Record<string, string>> {
    const host = this.host('objects');
    let settings: Record<string, string> | null = null;
    const store = await startLoggingProcess('objects', ['test/support/object-store-process.ts', host.address, String(OBJECT_STORE_PORT), bucket], {}, (line) => {
      if (typeof line.endpoint !== 'string' || !line.env || typeof line.env !== 'object') return null;
      settings = line.env as Record<string, string>;
      return line.endpoint;
    }, { launcher: host.launcher });
    this.providers.set('objects', store);
    return settings!;
  }

  /** A gateway process on a gateway host, listening on the host's address. */
  async startGateway(name: (typeof GATEWAY_HOSTS)[number], env: Record<string, string>): Promise<GatewayProcess> {
    const host = this.host(name);
    const gateway = await startGatewayProcess(name, { ...env, HOST: host.address }, { launcher: host.launcher });
    this.gateways.set(name, gateway);
    return gateway;
  }

  /**
   * Kills every process (an orderly stop of a gateway still cut off would wait on its database),
   * stops the database, then deletes the hosts. Safe after a failed build.
   */
  async destroy(): Promise<void> {
    await Promise.all([...this.gateways.values(), ...this.providers.values()].map((p) => p.kill()));
    await this.database?.stop();
    await this.network.destroy();
  }
}
