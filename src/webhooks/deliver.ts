import { Agent, request } from 'undici';
import { guardedConnector } from './target-guard';
import { signWebhook } from './signing';

export interface DeliveryResult {
  readonly ok: boolean;
  readonly statusCode: number | null;
  readonly error: string | null;
  readonly durationMs: number;
  /** The `X-Service-Timestamp` and `X-Service-Signature` values sent (signature null when unsigned), so a receiver's check can be compared with them. */
  readonly timestamp: number;
  readonly signature: string | null;
}

/**
 * One webhook attempt: POST the raw body, signed afresh with its own timestamp when a secret is
 * given. Success is a 2xx within the deadline; anything else (another status, a timeout, a refused
 * target, a network error) is a failed attempt, reported, never thrown.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(
    private readonly options: {
      timeoutMs: number;
      allowPrivateTargets: boolean;
      clock: () => Date;
      /** Sees the outcome of every attempt. */
      onAttempt?: (outcome: 'delivered' | 'rejected' | 'timeout' | 'error') => void;
    },
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
    const signature = secret ? signWebhook(secret, timestamp, body) : null;
    if (signature) headers['x-service-signature'] = signature;
    const sent = { timestamp, signature };
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
      this.options.onAttempt?.(ok ? 'delivered' : 'rejected');
      return { ok, statusCode: res.statusCode, error: ok ? null : `HTTP ${res.statusCode}`, durationMs: Math.round(performance.now() - started), ...sent };
    } catch (err) {
      const timedOut = (err as Error).name === 'TimeoutError' || (err as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT';
      this.options.onAttempt?.(timedOut ? 'timeout' : 'error');
      const error = timedOut ? `no answer within ${this.options.timeoutMs} ms` : (err as Error).message;
      return { ok: false, statusCode: null, error, durationMs: Math.round(performance.now() - started), ...sent };
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}
