/** The samples of a Prometheus text exposition, keyed by `name{label="value",…}` as printed. */
export function parseExposition(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** The sum of metric `name`'s samples that carry every one of `labels` (0 when none does). */
export function sample(samples: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total = 0;
  for (const [key, value] of samples) {
    const brace = key.indexOf('{');
    const metric = brace === -1 ? key : key.slice(0, brace);
    if (metric !== name) continue;
    const present = brace === -1 ? [] : key.slice(brace + 1, -1).split(',');
    if (wanted.every((w) => present.includes(w))) total += value;
  }
  return total;
}

/** The samples of a gateway's GET /metrics (open, no METRICS_TOKEN). */
export async function scrapeMetrics(url: string): Promise<Map<string, number>> {
  const res = await fetch(`${url}/metrics`);
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  return parseExposition(await res.text());
}
