import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type Router from '@koa/router';
import type { Pool } from 'pg';
import { allProjections } from '../projections';
import { persistentSecret, resolveAdminToken } from './secrets';
import { UrlSigner } from './files/signed-urls';
import { LocalFileStore, type FileStore } from './files/store';
import { signedFiles } from './files/routes';
import { JobWorker, type JobHandler } from './jobs/queue';
import { TaskEngine } from './tasks/engine';
import { taskJobHandlers } from './tasks/jobs';
import { taskProcessManager } from './tasks/process-manager';
import { WebhookSender } from './webhooks/deliver';
import { AccountService, type AccountCommands } from './accounts/service';
import type { Config } from './config';
import { openDatabase, type Database } from './db/database';
import { migrate } from './db/migrations';
import { accountDecider } from './domain/account/decider';
import { CommandHandler } from './domain/command-handler';
import { EventStoreDbEventStore } from './eventstore/eventstoredb/store';
import type { EventStore } from './eventstore/port';
import { PostgresEventStore } from './eventstore/postgres/store';
import { eventStoreMigrations } from './eventstore/postgres/schema';
import { Catalog, DEFAULT_CATALOG_FILE } from './billing/catalog';
import { createApp } from './http/app';
import type { RouteInfo } from './http/routing';
import { RateLimiter } from './http/rate-limit';
import { Upstreams } from './upstreams/registry';
import type { GatewayState } from './http/context';
import type { ErrorShape } from './http/errors';
import { createLogger, type Logger } from './log';
import { Reconciler } from './processes/reconciler';
import { READ_MODEL_SCHEMA, type Consumer } from './projections-runtime/consumer';
import { LeaseHolder } from './projections-runtime/leases';
import { ConsumerProgress } from './projections-runtime/progress';
import { ConsumerRunner } from './projections-runtime/runner';
import { runtimeMigrations } from './projections-runtime/schema';
import { consumerStatuses } from './projections-runtime/status';
import { ensureProjectionTables } from './projections-runtime/tables';

export const ALL_MIGRATIONS = [...eventStoreMigrations, ...runtimeMigrations];

/** Everything the gateway's features are built from; features add routers and consumers to it. */
export interface Core {
  readonly config: Config;
  readonly logger: Logger;
  readonly pool: Pool;
  readonly store: EventStore;
  readonly accounts: AccountService;
  readonly accountCommands: AccountCommands;
  readonly progress: ConsumerProgress;
  readonly clock: () => Date;
  readonly catalog: Catalog;
  readonly upstreams: Upstreams;
  readonly rateLimiter: RateLimiter;
  /** Where generated and archived files live, and the signer of their download links. */
  readonly files: FileStore;
  readonly signer: UrlSigner;
  /** The asynchronous task engine; task kinds register with it. */
  readonly tasks: TaskEngine;
}

/** A capability of the gateway: its HTTP routes, its consumers and its background workers. */
export interface Feature {
  readonly routers?: readonly Router<GatewayState>[];
  /** Process managers of the feature (its read models belong in projections/index.ts). */
  readonly consumers?: readonly Consumer[];
  /** Job kinds the feature's consumers schedule (durable timers, side effects), by kind. */
  readonly jobHandlers?: Readonly<Record<string, JobHandler>>;
  readonly errorShapes?: readonly (readonly [RegExp, ErrorShape])[];
  start?(): void;
  stop?(): Promise<void>;
}

export type FeatureFactory = (core: Core) => Feature;

export interface Gateway extends Core {
  readonly url: string;
  readonly adminToken: string;
  readonly reconciler: Reconciler;
  readonly runners: ReadonlyMap<string, ConsumerRunner>;
  readonly server: http.Server;
  /** Every route the HTTP API answers, read from its routers. */
  readonly routes: readonly RouteInfo[];
  close(): Promise<void>;
}

export interface GatewayOptions {
  readonly logger?: Logger;
  readonly clock?: () => Date;
  readonly features?: readonly FeatureFactory[];
  /** Use this database instead of opening one from the config (tests share one embedded server). */
  readonly database?: Database;
}

export function createEventStore(config: Config, pool: Pool): EventStore {
  return config.eventStore === 'eventstoredb'
    ? new EventStoreDbEventStore({ connectionString: config.esdbConnectionString! })
    : new PostgresEventStore({ pool, pollIntervalMs: config.subscriptionPollMs });
}

export async function startGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? (() => new Date());
  const database =
    options.database ??
    (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, embeddedPort: config.embeddedPgPort, logger }));
  const pool = database.pool;
  await migrate(pool, ALL_MIGRATIONS);
  await ensureProjectionTables(pool, allProjections, READ_MODEL_SCHEMA);

  const store = createEventStore(config, pool);
  const runners = new Map<string, ConsumerRunner>();
  const progress = new ConsumerProgress(pool, store, runners);
  const accountCommands: AccountCommands = new CommandHandler(store, pool, accountDecider, logger);
  const accounts = new AccountService(accountCommands, pool, progress, { projectionWaitMs: config.projectionWaitMs, clock });
  const catalog = new Catalog(config.catalogFile ?? DEFAULT_CATALOG_FILE);
  const upstreams = await Upstreams.start(config, catalog, logger);
  const rateLimiter = new RateLimiter(config.rateLimitPerMinute);
  const files = new LocalFileStore(path.join(config.dataDir, 'files'));
  let listeningUrl = '';
  const signer = new UrlSigner(persistentSecret(config.urlSigningSecret, config.dataDir, 'url-signing-secret', 'sig_'), () => config.publicBaseUrl ?? listeningUrl, clock);
  const webhooks = new WebhookSender({ timeoutMs: config.webhookTimeoutMs, allowPrivateTargets: config.webhookAllowPrivateTargets, clock });
  const tasks = new TaskEngine({
    pool,
    store,
    accounts,
    progress,
    logger,
    clock,
    files,
    signer,
    webhooks,
    settings: {
      projectionWaitMs: config.projectionWaitMs,
      orphanReservationGraceMs: config.orphanReservationGraceMs,
      taskPollMs: config.taskPollMs,
      taskTimeoutMs: config.taskTimeoutMs,
      inlineSubmitGraceMs: config.taskInlineSubmitGraceMs,
      webhookRetryDelaysMs: config.webhookRetryDelaysMs,
    },
  });
  const core: Core = { config, logger, pool, store, accounts, accountCommands, progress, clock, catalog, upstreams, rateLimiter, files, signer, tasks };
  const features = (options.features ?? []).map((make) => make(core));

  const leases = new LeaseHolder(pool, logger);
  const processManagers: Consumer[] = [taskProcessManager(config)];
  for (const consumer of [...allProjections, ...processManagers, ...features.flatMap((f) => f.consumers ?? [])]) {
    const runner = new ConsumerRunner(pool, store, consumer, logger, READ_MODEL_SCHEMA);
    runners.set(consumer.name, runner);
    runner.start(leases);
  }
  const reconciler = new Reconciler(pool, store, accounts, logger, {
    intervalMs: config.reconcileIntervalMs,
    orphanGraceMs: config.orphanReservationGraceMs,
    clock,
  });
  reconciler.start();
  const jobs = new JobWorker(pool, logger, { concurrency: config.jobConcurrency, leaseMs: config.jobLeaseMs, pollMs: 500 });
  for (const [kind, handler] of Object.entries(taskJobHandlers(tasks))) jobs.register(kind, handler);
  for (const feature of features) for (const [kind, handler] of Object.entries(feature.jobHandlers ?? {})) jobs.register(kind, handler);
  jobs.start();
  for (const feature of features) feature.start?.();

  const adminToken = resolveAdminToken(config.adminToken, config.dataDir, (line) => process.stdout.write(line + '\n'));
  let ready = false;
  const { app, routes } = createApp({
    logger,
    accounts,
    catalog,
    adminToken,
    isReady: () => ready,
    pool,
    consumerStatus: () => consumerStatuses(pool, store, runners),
    apiRouters: features.flatMap((f) => f.routers ?? []),
    publicMiddleware: [signedFiles(files, signer)],
    errorShapes: features.flatMap((f) => f.errorShapes ?? []),
    lockout: {
      maxFailures: config.authFailureLimit,
      windowMs: config.authFailureWindowMs,
      lockoutMs: config.authLockoutMs,
      maxAddresses: config.authLockoutMaxAddresses,
    },
    trustProxyHops: config.trustProxyHops,
    now: () => clock().getTime(),
  });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  ready = true;
  const address = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host}:${address.port}`;
  listeningUrl = url;
  logger.info({ url, eventStore: store.kind }, 'gateway listening');

  return {
    ...core,
    url,
    adminToken,
    reconciler,
    runners,
    server,
    routes,
    async close() {
      ready = false;
      server.closeIdleConnections();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      setTimeout(() => server.closeAllConnections(), 2000).unref();
      await closed;
      for (const feature of features) await feature.stop?.();
      await jobs.stop();
      await webhooks.close();
      await reconciler.stop();
      await Promise.all([...runners.values()].map((r) => r.stop()));
      await leases.close();
      await upstreams.close();
      await store.close();
      if (!options.database) await database.close();
    },
  };
}
