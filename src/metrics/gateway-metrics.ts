import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Logger } from '../log';
import type { UpstreamOutcome } from '../upstreams/channel';

/**
 * The gateway's Prometheus metrics. Every label value comes from a bounded set (route templates,
 * catalog models, channel names, job kinds, fixed outcome words), never from a raw path, an
 * account or a request, so the series count cannot grow with traffic.
 */
export class GatewayMetrics {
  private readonly registry = new Registry();

  private readonly httpRequests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time from request to the last byte written by the handler, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly upstreamRequests = new Counter({
    name: 'gateway_upstream_requests_total',
    help: 'Calls to upstream providers, by channel, model and outcome (ok, client_error, server_error, timeout, network, aborted).',
    labelNames: ['channel', 'model', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly upstreamDuration = new Histogram({
    name: 'gateway_upstream_response_seconds',
    help: 'Time until an upstream answered with its status and headers (a stream goes on after it), by channel, model and outcome.',
    labelNames: ['channel', 'model', 'outcome'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  private readonly failovers = new Counter({
    name: 'gateway_channel_failovers_total',
    help: 'Attempts given up on a channel for the next one (or for the answer, when none was left), by channel and reason (connect, timeout, network, server_error, rate_limited, credentials_refused, forbidden).',
    labelNames: ['channel', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly channelTransitions = new Counter({
    name: 'gateway_channel_transitions_total',
    help: 'Channel health transitions this process decided, by channel and event (ChannelCooldownStarted, ChannelCircuitOpened, ChannelCircuitHalfOpened, ChannelCircuitClosed, ChannelCredentialsRefused).',
    labelNames: ['channel', 'event'] as const,
    registers: [this.registry],
  });
  private readonly money = new Counter({
    name: 'gateway_money_minor_units_total',
    help: 'Money moved by this process, in minor units (1/1,000,000 CNY), by movement (reserved, settled, released, refunded, credited) and model.',
    labelNames: ['movement', 'model'] as const,
    registers: [this.registry],
  });
  private readonly appends = new Counter({
    name: 'gateway_event_appends_total',
    help: 'Appends to the event log, by stream category and outcome (ok, conflict, error).',
    labelNames: ['category', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly appendedEvents = new Counter({
    name: 'gateway_events_appended_total',
    help: 'Events appended to the log, by stream category.',
    labelNames: ['category'] as const,
    registers: [this.registry],
  });
  private readonly appendDuration = new Histogram({
    name: 'gateway_event_append_seconds',
    help: 'Time of one append (a durable commit), by stream category.',
    labelNames: ['category'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [this.registry],
  });
  private readonly jobRuns = new Counter({
    name: 'gateway_job_runs_total',
    help: 'Job attempts run by this process, by job kind and outcome (done, rescheduled, failed).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly webhookAttempts = new Counter({
    name: 'gateway_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, rejected, timeout, error).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly limitStoreOutages = new Counter({
    name: 'gateway_limit_store_outages_total',
    help: 'Times this process found the shared limit store out of reach and began limiting on its own.',
    registers: [this.registry],
  });

  /** `logger` hears of a recording that failed (prom-client refuses a value it cannot count). */
  constructor(
    private readonly logger: Pick<Logger, 'error'>,
    options: { defaultMetrics?: boolean } = {},
  ) {
    // Process metrics (CPU, memory, event-loop lag, handles) under the usual names.
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
    this.registerCacheMetrics();
  }

  /** The in-process caches by name, each read when Prometheus scrapes (watchCache). */
  private readonly caches = new Map<string, () => CacheCounts>();

  private registerCacheMetrics(): void {
    const caches = this.caches;
    new Gauge({
      name: 'gateway_cache_entries',
      help: 'Entries an in-process cache of this process keeps, by cache.',
      labelNames: ['cache'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [cache, counts] of caches) this.set({ cache }, counts().entries);
      },
    });
    for (const outcome of ['hits', 'misses'] as const) {
      new Counter({
        name: `gateway_cache_${outcome}_total`,
        help: `Lookups of an in-process cache of this process that found ${outcome === 'hits' ? 'their entry' : 'none'}, by cache.`,
        labelNames: ['cache'] as const,
        registers: [this.registry],
        // The caches count for themselves; a scrape reads their totals.
        collect() {
          this.reset();
          for (const [cache, counts] of caches) this.inc({ cache }, counts()[outcome]);
        },
      });
    }
  }

  /** Reports a cache's entries, hits and misses under `name` in every scrape (a bounded set: one per cache the code has). */
  watchCache(name: string, counts: () => CacheCounts): void {
    this.caches.set(name, counts);
  }

  /**
   * Recordings wait until the turn of the event loop that made them has ended, in order: label
   * hashing and histogram buckets cost 2-3 µs each, a dozen per chat call, and the turn that ends
   * a request is the one that writes its answer. A scrape applies what is pending first (text()),
   * so a count is never missing from it. One recording that fails is logged and skipped; it
   * neither loses the others nor throws into the event loop (which would end the process).
   */
  private pending: (() => void)[] = [];

  private later(record: () => void): void {
    if (this.pending.push(record) === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const records = this.pending;
    this.pending = [];
    for (const record of records) {
      try {
        record();
      } catch (err) {
        this.logger.error({ err }, 'a metric could not be recorded');
      }
    }
  }

  observeHttp(method: string, route: string, status: number, seconds: number): void {
    this.later(() => {
      const labels = { method, route, status: String(status) };
      this.httpRequests.inc(labels);
      this.httpDuration.observe(labels, seconds);
    });
  }

  observeUpstream(channel: string, model: string, outcome: UpstreamOutcome, seconds: number): void {
    this.later(() => {
      this.upstreamRequests.inc({ channel, model, outcome });
      this.upstreamDuration.observe({ channel, model, outcome }, seconds);
    });
  }

  countMoney(movement: MoneyMovement, model: string, amount: number): void {
    if (amount > 0) this.later(() => this.money.inc({ movement, model }, amount));
  }

  observeAppend(streamId: string, events: number, outcome: 'ok' | 'conflict' | 'error', seconds: number): void {
    this.later(() => {
      const category = streamCategory(streamId);
      this.appends.inc({ category, outcome });
      if (outcome !== 'ok') return;
      this.appendedEvents.inc({ category }, events);
      this.appendDuration.observe({ category }, seconds);
    });
  }

  countFailover(channel: string, reason: string): void {
    this.later(() => this.failovers.inc({ channel, reason }));
  }

  countChannelTransition(channel: string, event: string): void {
    this.later(() => this.channelTransitions.inc({ channel, event }));
  }

  countJobRun(kind: string, outcome: JobOutcome): void {
    this.later(() => this.jobRuns.inc({ kind, outcome }));
  }

  countLimitStoreOutage(): void {
    this.later(() => this.limitStoreOutages.inc());
  }

  countWebhookAttempt(outcome: WebhookOutcome): void {
    this.later(() => this.webhookAttempts.inc({ outcome }));
  }

  /** A gauge whose values are read when Prometheus scrapes (database state, pool counters). */
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[], read: () => Promise<readonly { labels: Record<L, string>; value: number }[]>): void {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        // A database that does not answer leaves the gauge empty for this scrape; the scrape
        // itself still answers (with `up` and the process metrics, which say what is wrong).
        const values = await read().catch(() => []);
        for (const { labels, value } of values) this.set(labels, value);
      },
    });
  }

  text(): Promise<string> {
    this.flush();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** What the cache metrics read of a cache: entries kept, and its lookups so far by outcome. */
export interface CacheCounts {
  readonly entries: number;
  readonly hits: number;
  readonly misses: number;
}

export type WebhookOutcome = 'delivered' | 'rejected' | 'timeout' | 'error';
export type JobOutcome = 'done' | 'rescheduled' | 'failed';
export type MoneyMovement = 'reserved' | 'settled' | 'released' | 'refunded' | 'credited';

/** `account-…` → `account`, `video-…` → `video`: the part before the first dash of a stream id. */
export function streamCategory(streamId: string): string {
  const dash = streamId.indexOf('-');
  return dash > 0 ? streamId.slice(0, dash) : streamId;
}
