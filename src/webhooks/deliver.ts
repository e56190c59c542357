import { Agent, request } from 'undici';
import { guardedConnector } from './target-guard';
import { signWebhook } from './signing';

export interface DeliveryResult {
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
}

/**
 * One webhook attempt: POST the raw body, signed afresh with its own timestamp when a secret is
 * given. Success is a 2xx within the deadline; anything else (another status, a timeout, a refused
 * target, a network error) is a failed attempt, reported, never thrown.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(
    private readonly options: { timeoutMs: number; allowPrivateTargets: boolean; clock: () => Date },
  ) {
    this.agent = new Agent({
      connect: guardedConnector(options.allowPrivateTargets, { timeout: options.timeoutMs }),
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      keepAliveTimeout: 10_000,
    });
  }

  async send(url: string, body: string, secret: string | null): Promise<DeliveryResult> {
    const started = performance.now();
    const timestamp = Math.floor(this.options.clock().getTime() / 1000);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'media-agent-gateway-webhooks/1',
      'x-service-timestamp': String(timestamp),
    };
    if (secret) headers['x-service-signature'] = signWebhook(secret, timestamp, body);
    try {
      const res = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      await res.body.dump();
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { ok, statusCode: res.statusCode, error: ok ? null : `HTTP ${res.statusCode}`, durationMs: Math.round(performance.now() - started) };
    } catch (err) {
      const error = (err as Error).name === 'TimeoutError' || (err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT' ? `no answer within ${this.options.timeoutMs} ms` : (err as Error).message;
      return { ok: false, statusCode: null, error, durationMs: Math.round(performance.now() - started) };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
