import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { allProjections } from '../projections';
import { persistentSecret, resolveAdminToken } from './secrets';
import { UrlSigner } from './files/signed-urls';
import { LocalFileStore, type FileStore } from './files/store';
import { S3FileStore } from './files/s3-store';
import { signedFiles } from './files/routes';
import { JobWorker } from './jobs/queue';
import { TaskEngine } from './tasks/engine';
import { taskJobHandlers } from './tasks/jobs';
import { taskProcessManager } from './tasks/process-manager';
import { unfinishedTasksOn } from './tasks/read';
import { WebhookSender } from './webhooks/deliver';
import { ApiKeyCache } from './accounts/key-cache';
import { AccountService, type AccountCommands, type AuthenticatedKey } from './accounts/service';
import type { Config } from './config';
import { createPool, openDatabase, type Database } from './db/database';
import { accountDecider } from './domain/account/decider';
import { CommandHandler } from './domain/command-handler';
import { PostgresSnapshotStore } from './eventstore/postgres/snapshots';
import type { EventStore } from './eventstore/port';
import { Catalog, DEFAULT_CATALOG_FILE } from './billing/catalog';
import { ALL_MODEL_TYPES } from './model-types';
import { createApp } from './http/app';
import { createDashboard } from './dashboard';
import type { RouteInfo } from './http/routing';
import { bindPort, InFlightRequests } from './lifecycle/in-flight';
import { checkReadiness, type Readiness } from './lifecycle/readiness';
import { RateLimiter } from './http/rate-limit';
import { fleetLimiter, prepareLimitsDatabase } from './limits/gateway-limits';
import type { FleetLimiter } from './limits/fleet-limiter';
import { Upstreams, type FallbackUpstream } from './upstreams/registry';
import { Router } from './upstreams/routing/router';
import { ChannelHealthLog } from './upstreams/routing/health-log';
import { CHANNEL_STATES } from './upstreams/routing/health';
import { createLogger, type Logger } from './log';
import { Reconciler } from './processes/reconciler';
import { SettlementJournal } from './billing/settlement-journal';
import { GroupCommitter } from './projections-runtime/checkpoint-commit';
import { READ_MODEL_SCHEMA, type Consumer } from './projections-runtime/consumer';
import { LeaseHolder } from './projections-runtime/leases';
import { ConsumerProgress } from './projections-runtime/progress';
import { ConsumerRunner } from './projections-runtime/runner';
import { consumerStatuses } from './projections-runtime/status';
import { GatewayMetrics } from './metrics/gateway-metrics';
import { MeteredEventStore } from './metrics/metered-event-store';
import { countMoneyMovements } from './metrics/money-movements';
import { registerStateGauges } from './metrics/state-gauges';
import { renderTask, taskListRouter } from './http/routes/tasks';
import { webhookDeliveriesRouter } from './http/routes/webhook-deliveries';
import { droppedWebhooksRouter } from './http/routes/dropped-webhooks';
import { auditRouter } from './http/routes/audit';
import { accountRequestLogRouter, adminRequestLogRouter, type RequestLogDeps } from './http/routes/request-log';
import { allKeysRouter } from './http/routes/all-keys';
import { requestLogCaughtUp } from './read/request-log';
import { AuditRuns } from './audit-runs/service';
import { CredentialCipher } from './channels/credential-cipher';
import { ChannelDirectory } from './channels/directory';
import { channelsRouter } from './channels/routes';
import { ChannelService } from './channels/service';
import { channelDecider } from './domain/channel/decider';
import { probeChannelConfig } from './upstreams/probe';
import { ChannelCallStats, CHANNEL_CALLS_WINDOW_MINUTES } from './upstreams/routing/call-stats';

import type { Feature } from './feature-types';
import { ALL_MIGRATIONS, createEventStore, prepareSchema } from './storage';

// The CLI tools and the tests build their storage the gateway's way.
export { ALL_MIGRATIONS, createEventStore };

/**
 * Every service of the gateway. Only the composition root (this module and src/features.ts) sees
 * it whole: each feature is handed the few services its own Deps type names.
 */
export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly pool: Pool;
  readonly store: EventStore;
  readonly accounts: AccountService;
  readonly progress: ConsumerProgress;
  readonly clock: () => Date;
  readonly catalog: Catalog;
  readonly upstreams: Upstreams;
  /** Picks a model's channel for each attempt and fails over (src/upstreams/routing). */
  readonly router: Router;
  /** Shares the router's channel health with the other processes through the log. */
  readonly channelHealth: ChannelHealthLog;
  readonly rateLimiter: RateLimiter;
  /** The limits every gateway process counts together (rates, tokens per minute, polls). */
  readonly limits: FleetLimiter;
  /** Where generated and archived files live, and the signer of their download links. */
  readonly files: FileStore;
  readonly signer: UrlSigner;
  /** The asynchronous task engine; task kinds register with it. */
  readonly tasks: TaskEngine;
  readonly metrics: GatewayMetrics;
  /** Settlements of synchronous requests, kept on disk while the database cannot take them. */
  readonly settlements: SettlementJournal;
}

/** A feature as the root mounts it: its process managers (from settings alone) and how it is built from the services. */
export interface GatewayFeature {
  /**
   * The feature's consumers. They need settings only, so the root creates every consumer's
   * runner before the services that wait on runners (ConsumerProgress) exist.
   */
  readonly consumers?: (config: Config) => readonly Consumer[];
  readonly build: (services: Services) => Feature;
}

/** The running gateway, as the entry point and the tests hold it. */
export interface Gateway extends Services {
  readonly url: string;
  readonly adminToken: string;
  readonly accountCommands: AccountCommands;
  readonly reconciler: Reconciler;
  readonly runners: ReadonlyMap<string, ConsumerRunner>;
  readonly server: http.Server;
  /** Authenticated keys of this process, invalidated by the key events of the log. */
  readonly keyCache: ApiKeyCache<AuthenticatedKey>;
  /** Every route the HTTP API answers, read from its routers. */
  readonly routes: readonly RouteInfo[];
  close(): Promise<void>;
}

export interface GatewayOptions {
  readonly logger?: Logger;
  readonly clock?: () => Date;
  readonly features?: readonly GatewayFeature[];
  /** Use this database instead of opening one from the config (tests share one embedded server). */
  readonly database?: Database;
  /** Serves the channels CHANNELS leaves out (all of them when it is unset); see Upstreams. */
  readonly fallbackUpstream?: FallbackUpstream;
}

type BoundPort = Awaited<ReturnType<typeof bindPort>>;

export async function startGateway(config: Config, options: GatewayOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logLevel);
  // The database first: a second gateway on this DATA_DIR is refused naming the first, before
  // it could fail on the first's port.
  const database =
    options.database ??
    (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, embeddedPort: config.embeddedPgPort, logger, role: 'gateway' }));
  let port: BoundPort | null = null;
  try {
    // Then the port, before any consumer or worker holds a connection: a taken port fails here.
    port = await bindPort(config.port, config.host);
    return await startOn(database, port, config, options, logger);
  } catch (err) {
    // A start that fails (a taken port, a bad catalog) leaves no embedded server running behind it.
    port?.server.close();
    if (!options.database) await database.close().catch(() => undefined);
    throw err;
  }
}

/** The services, built in an order that hands none of them a half-built dependency. */
async function buildServices(database: Database, config: Config, options: GatewayOptions, logger: Logger) {
  const clock = options.clock ?? (() => new Date());
  const pool = database.pool;
  const metrics = new GatewayMetrics(logger);
  const store = new MeteredEventStore(createEventStore(config, pool), (stream, events, outcome, seconds) => metrics.observeAppend(stream, events, outcome, seconds));
  // Every consumer's runner exists before ConsumerProgress, which watches them: none can be missing.
  const consumers = [...allProjections, taskProcessManager(config), ...(options.features ?? []).flatMap((f) => f.consumers?.(config) ?? [])];
  const committer = new GroupCommitter(pool, READ_MODEL_SCHEMA, logger);
  const runners: ReadonlyMap<string, ConsumerRunner> = new Map(
    consumers.map((consumer) => [consumer.name, new ConsumerRunner(pool, store, consumer, logger, READ_MODEL_SCHEMA, { committer })]),
  );
  const progress = new ConsumerProgress(pool, store, runners);
  const accountCommands: AccountCommands = new CommandHandler(store, new PostgresSnapshotStore(pool), accountDecider, logger, { onAppended: countMoneyMovements(metrics) });
  const keyCache = new ApiKeyCache<AuthenticatedKey>((position, timeoutMs) => progress.waitFor(position, ['api_keys'], timeoutMs));
  metrics.watchCache('api_keys', () => {
    const { size, hits, misses } = keyCache.stats();
    return { entries: size, hits, misses };
  });
  const accounts = new AccountService(accountCommands, pool, progress, { projectionWaitMs: config.projectionWaitMs, clock, rateLimitPerMinute: config.rateLimitPerMinute, keyCache });
  const catalog = new Catalog(config.catalogFile ?? DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
  const channelCalls = new ChannelCallStats(CHANNEL_CALLS_WINDOW_MINUTES, () => clock().getTime());
  const upstreams = await Upstreams.start(
    config,
    catalog,
    logger,
    (channel, model, outcome, seconds) => {
      metrics.observeUpstream(channel, model, outcome, seconds);
      channelCalls.observe(channel, outcome, seconds);
    },
    options.fallbackUpstream,
  );
  const channelHealth = new ChannelHealthLog(store, logger);
  const router = new Router(
    upstreams,
    { ...config.routing, clock },
    {
      failover: (channel, reason) => metrics.countFailover(channel, reason),
      transition: (event) => metrics.countChannelTransition(event.data.channel, event.type),
    },
    (event) => channelHealth.record(event),
  );
  metrics.gauge('gateway_channel_state', 'Each channel\'s health in this process: 1 for its state (closed, cooling_down, open, half_open, disabled), 0 for the others.', ['channel', 'state'], async () =>
    upstreams.names().flatMap((channel) => {
      const { state } = router.health(channel);
      return CHANNEL_STATES.map((s) => ({ labels: { channel, state: s }, value: s === state ? 1 : 0 }));
    }),
  );
  const channels = await startChannels(config, { store, pool, progress, clock, logger, upstreams });
  const files = openFileStore(config, logger);
  // Links name the public base URL, else the address the server listens on once it is known.
  const listening = { url: '' };
  const signer = new UrlSigner(persistentSecret(config.urlSigningSecret, config.dataDir, 'url-signing-secret', 'sig_'), () => config.publicBaseUrl ?? listening.url, clock);
  const tasks = new TaskEngine({
    pool,
    store,
    accounts,
    progress,
    logger,
    clock,
    settings: {
      projectionWaitMs: config.projectionWaitMs,
      idempotencyLeaseMs: config.idempotencyLeaseMs,
      inlineSubmitGraceMs: config.taskInlineSubmitGraceMs,
    },
  });
  const limits = fleetLimiter(config, database.url, metrics, logger, () => clock().getTime(), options.clock !== undefined);
  const rateLimiter = new RateLimiter(config.rateLimitPerMinute, limits);
  const settlements = new SettlementJournal(path.join(config.dataDir, 'settlement-journal'), accounts, logger, { retryMs: config.settlementJournalRetryMs, clock });
  const services: Services = { config, logger, pool, store, accounts, progress, clock, catalog, upstreams, router, channelHealth, rateLimiter, limits, files, signer, tasks, metrics, settlements };
  return { services, runners, accountCommands, keyCache, listening, channels, channelCalls };
}

/**
 * Channels managed at run time (src/channels/): their credentials' cipher, the service the admin
 * API calls, and this process's directory, loaded with what CHANNELS seeded into the log.
 */
async function startChannels(
  config: Config,
  deps: { store: EventStore; pool: Pool; progress: ConsumerProgress; clock: () => Date; logger: Logger; upstreams: Upstreams },
): Promise<{ service: ChannelService; directory: ChannelDirectory }> {
  const { logger } = deps;
  const key = persistentSecret(config.channelSecretsKey, config.dataDir, 'channel-secrets-key', 'csk_', (_secret, file) =>
    logger.warn({ file }, 'CHANNEL_SECRETS_KEY is unset: generated one into DATA_DIR; gateways that do not share DATA_DIR must all be given the same CHANNEL_SECRETS_KEY'),
  );
  const cipher = new CredentialCipher(key, config.channelSecretsPreviousKeys);
  const commands = new CommandHandler(deps.store, new PostgresSnapshotStore(deps.pool), channelDecider, logger);
  const service = new ChannelService(commands, deps.store, deps.pool, cipher, deps.clock, { progress: deps.progress, waitMs: config.projectionWaitMs });
  const directory = new ChannelDirectory(service, deps.upstreams, logger);
  if (config.channels) {
    // The log is the record: CHANNELS only creates what it has never held.
    for (const kept of await service.seed(config.channels)) {
      if (kept.deleted) logger.warn({ channel: kept.name }, 'CHANNELS lists a channel deleted through the admin API: it stays deleted');
      else logger.warn({ channel: kept.name, differing: kept.differing }, 'CHANNELS differs from the channel the log records: the log\'s version serves (change it through /admin/v1/channels)');
    }
    await directory.load(config.channels);
  }
  return { service, directory };
}

function openFileStore(config: Config, logger: Logger): FileStore {
  const settings = config.fileStore;
  if (settings.kind === 'local') return new LocalFileStore(path.join(config.dataDir, 'files'));
  // The endpoint's origin only: a URL may carry a user and password.
  logger.info({ bucket: settings.bucket, endpoint: settings.endpoint ? new URL(settings.endpoint).origin : 'AWS', keyPrefix: settings.keyPrefix }, 'files are kept in an S3 bucket');
  if (!config.urlSigningSecret) {
    // The secret generated into this DATA_DIR is this gateway's alone: another gateway on the same bucket refuses its links.
    logger.warn('FILE_STORE=s3 without URL_SIGNING_SECRET: download links signed here are valid only at gateways sharing this DATA_DIR');
  }
  return new S3FileStore(settings, logger);
}

/** The background side: consumers, the reconciler, and the job worker with every job kind. */
function startWorkers(services: Services, runners: ReadonlyMap<string, ConsumerRunner>, features: readonly Feature[]) {
  const { config, logger, pool, store, accounts, clock, metrics, tasks, files, signer, settlements } = services;
  const leases = new LeaseHolder(pool, logger);
  for (const runner of runners.values()) runner.start(leases);
  const reconciler = new Reconciler(pool, store, accounts, logger, {
    intervalMs: config.reconcileIntervalMs,
    orphanGraceMs: config.orphanReservationGraceMs,
    settlementHorizonMs: config.settlementJournalHorizonMs,
    clock,
  });
  reconciler.start();
  void settlements.start().catch((err: unknown) => logger.error({ err }, 'could not read the settlement journal'));
  metrics.gauge('gateway_settlement_journal_entries', 'Settlements this process journaled while the database was unreachable and has not settled yet.', [], async () => [
    { labels: {}, value: settlements.size },
  ]);
  const webhooks = new WebhookSender({
    timeoutMs: config.webhookTimeoutMs,
    allowPrivateTargets: config.webhookAllowPrivateTargets,
    clock,
    onAttempt: (outcome) => metrics.countWebhookAttempt(outcome),
  });
  const jobs = new JobWorker(pool, logger, {
    concurrency: config.jobConcurrency,
    leaseMs: config.jobLeaseMs,
    pollMs: 500,
    onRun: (kind, outcome) => metrics.countJobRun(kind, outcome),
  });
  for (const [kind, handler] of Object.entries(taskJobHandlers(tasks, { logger, clock, taskTimeoutMs: config.taskTimeoutMs, accounts, files, signer, webhooks }))) jobs.register(kind, handler);
  for (const feature of features) for (const [kind, handler] of Object.entries(feature.jobHandlers ?? {})) jobs.register(kind, handler);
  jobs.start();
  for (const feature of features) feature.start?.();
  registerStateGauges(metrics, {
    pool,
    schema: READ_MODEL_SCHEMA,
    consumerLag: async () => (await consumerStatuses(pool, store, runners)).consumers,
  });
  return { leases, reconciler, webhooks, jobs };
}

/** The HTTP application: the features' routers behind the route guard, with the operator's endpoints. */
function buildHttp(
  services: Services,
  features: readonly Feature[],
  adminToken: string,
  readiness: () => Promise<Readiness>,
  runners: ReadonlyMap<string, ConsumerRunner>,
  audits: AuditRuns,
  channels: ChannelService,
  channelCalls: ChannelCallStats,
) {
  const { config, logger, pool, store, accounts, catalog, clock, metrics, tasks, files, signer, router, progress } = services;
  const requestLog: RequestLogDeps = { pool, fresh: async (accountId) => void (await requestLogCaughtUp(progress, accountId, config.projectionWaitMs)) };
  return createApp({
    logger,
    accounts,
    catalog,
    adminToken,
    readiness,
    pool,
    consumerStatus: () => consumerStatuses(pool, store, runners),
    metrics,
    metricsToken: config.metricsToken,
    adminRouters: [
      droppedWebhooksRouter(pool),
      auditRouter(audits),
      adminRequestLogRouter(requestLog),
      allKeysRouter({ pool, clock }),
      channelsRouter({
        channels,
        modelsOn: (name) => catalog.all().filter((m) => m.channels.some((c) => c.name === name)).map((m) => m.id),
        tasksOn: (name) => unfinishedTasksOn(pool, name, 10),
        probe: async (name) => probeChannelConfig(await channels.currentConfig(name)),
        health: (name, disabledByOperator) => router.health(name, disabledByOperator),
        recentCalls: (name) => channelCalls.summary(name),
      }),
    ],
    apiRouters: [
      ...features.flatMap((f) => f.routers ?? []),
      taskListRouter({ pool, render: (row) => renderTask(tasks, signer, row) }),
      webhookDeliveriesRouter({ readVideo: (id, accountId) => tasks.read('video', id, accountId) }),
      accountRequestLogRouter(requestLog),
    ],
    publicMiddleware: [signedFiles(files, signer)],
    lockout: {
      maxFailures: config.authFailureLimit,
      windowMs: config.authFailureWindowMs,
      lockoutMs: config.authLockoutMs,
      maxAddresses: config.authLockoutMaxAddresses,
    },
    trustProxyHops: config.trustProxyHops,
    dashboard: createDashboard({ store, accounts, adminToken, clock }),
    now: () => clock().getTime(),
  });
}

async function startOn(database: Database, port: BoundPort, config: Config, options: GatewayOptions, logger: Logger): Promise<Gateway> {
  await prepareSchema(database.pool, allProjections);
  await prepareLimitsDatabase(config);
  const { services, runners, accountCommands, keyCache, listening, channels, channelCalls } = await buildServices(database, config, options, logger);
  const { pool, store, upstreams } = services;
  const features = (options.features ?? []).map((feature) => feature.build(services));
  const { leases, reconciler, webhooks, jobs } = startWorkers(services, runners, features);

  // An audit's replay holds a few connections for its whole run: they come from pools of its own.
  const audits = new AuditRuns({ pool, openPool: (size) => createPool(database.url, size), store, projections: allProjections, logger, clock: services.clock });
  const adminToken = resolveAdminToken(config.adminToken, config.dataDir, (line) => process.stdout.write(line + '\n'));
  let lifecycle: string | null = 'starting';
  const readiness = (): Promise<Readiness> =>
    checkReadiness({
      pool,
      migrationVersions: ALL_MIGRATIONS.map((m) => m.version),
      lifecycle: () => lifecycle,
      consumersProblem: () => {
        const failing = [...runners.values()].find((runner) => runner.isFailing);
        return leases.problem ?? (failing ? `${failing.consumer.name} is restarting` : null);
      },
      jobsProblem: () => jobs.problem,
    });
  const { app, routes } = buildHttp(services, features, adminToken, readiness, runners, audits, channels.service, channelCalls);
  const keyCacheFollower = keyCache.follow(store, logger);
  const channelFollower = channels.directory.follow(store, {
    reached: (position, timeoutMs) => services.progress.waitFor(position, ['channels'], timeoutMs),
    names: () => channels.service.namesFolded(),
  });
  const channelHealthFollower = services.channelHealth.follow((event) => services.router.apply(event));
  // Until the log's channels are applied, the channel set is CHANNELS' or the simulator's alone: a
  // request served now could go to a simulated channel the log replaces, or miss a channel created
  // through the API. The requests that arrive meanwhile wait at the bound port, as during the rest
  // of the start, and /readyz answers only once this is done.
  await channelFollower.started;
  const inFlight = new InFlightRequests();
  const server = port.server;
  server.keepAliveTimeout = 65_000;
  port.serve(inFlight.track(app.callback()));
  lifecycle = null;
  const address = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const url = `http://${host}:${address.port}`;
  listening.url = url;
  logger.info({ url, eventStore: store.kind, pid: process.pid }, 'gateway listening');

  return {
    ...services,
    accountCommands,
    url,
    adminToken,
    reconciler,
    runners,
    server,
    keyCache,
    routes,
    /**
     * In order: stop accepting; let the requests in flight finish, and after SHUTDOWN_GRACE_MS cut
     * their connections (a cut stream settles what it delivered); stop the consumers and workers;
     * close the database last, so every settlement above still reaches it.
     */
    async close() {
      lifecycle = 'shutting down';
      inFlight.startDraining();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (!(await inFlight.drained(config.shutdownGraceMs))) {
        logger.warn({ requests: inFlight.count, graceMs: config.shutdownGraceMs }, 'shutdown grace period over: closing the connections of the requests still running');
        server.closeAllConnections();
        if (!(await inFlight.drained(config.shutdownGraceMs))) logger.error({ requests: inFlight.count }, 'requests still running after their connections were closed; stopping anyway');
      }
      server.closeAllConnections();
      await closed;
      for (const feature of features) await feature.stop?.();
      await jobs.stop();
      await audits.stop();
      await webhooks.close();
      await reconciler.stop();
      await services.settlements.stop();
      await Promise.all([...runners.values()].map((r) => r.stop()));
      await leases.close();
      await keyCacheFollower.close();
      await channelFollower.close();
      await channelHealthFollower.close();
      await upstreams.close();
      await services.limits.close();
      services.files.close?.();
      await store.close();
      if (!options.database) await database.close();
    },
  };
}
