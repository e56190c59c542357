import { expect } from 'chai';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics';

describe('GatewayMetrics', () => {
  const logged: unknown[] = [];
  const logger = { error: (obj: unknown) => void logged.push(obj) };

  it('shows a count recorded in this turn in a scrape of the same turn', async () => {
    const metrics = new GatewayMetrics(logger, { defaultMetrics: false });
    metrics.observeHttp('POST', '/v1/chat/completions', 200, 0.002);
    metrics.countMoney('settled', 'chat-fast', 84);
    const text = await metrics.text();
    expect(text).to.include('gateway_http_requests_total{method="POST",route="/v1/chat/completions",status="200"} 1');
    expect(text).to.include('gateway_money_minor_units_total{movement="settled",model="chat-fast"} 84');
  });

  it('logs a recording that fails and keeps the others of its turn', async () => {
    logged.length = 0;
    const metrics = new GatewayMetrics(logger, { defaultMetrics: false });
    // A counter cannot go down: prom-client throws for -1 events.
    metrics.observeAppend('account-a', -1, 'ok', 0.001);
    metrics.observeHttp('GET', '/v1/models', 200, 0.001);
    // Recorded after this turn: wait for it, not for a clock.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(logged).to.have.length(1);
    const text = await metrics.text();
    expect(text).to.include('gateway_http_requests_total{method="GET",route="/v1/models",status="200"} 1');
    expect(text).to.include('gateway_event_appends_total{category="account",outcome="ok"} 1');
  });
});
