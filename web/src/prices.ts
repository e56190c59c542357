/**
 * A catalog model's `pricing` (minor units, as the catalog file states it) as lines a person reads:
 * a price and the unit it is for. The unit is an English text for the i18n, with placeholders.
 */
export interface PriceLine {
  readonly minor: number;
  readonly unit: string;
  readonly values?: Record<string, string>;
}

/** The unit of each price member the catalog's model types define (src/*\/model-type*.ts). */
const UNITS: Readonly<Record<string, string>> = {
  input_per_million: 'per 1M input tokens',
  cached_input_per_million: 'per 1M cached input tokens',
  output_per_million: 'per 1M output tokens',
  output_audio_per_million: 'per 1M output audio tokens',
  per_image: 'per image',
  per_query: 'per query',
  per_session: 'per session',
  per_second: 'per second',
  rate_per_hour: 'per hour of audio',
};

/** Price tables keyed by a variant (a video's resolution; a tool's name). */
const TABLES: Readonly<Record<string, string>> = {
  per_second: 'per second at {variant}',
  per_second_with_reference_video: 'per second at {variant} with a reference video',
  tool_call_prices: 'per {variant} call',
};

export function priceLines(pricing: Readonly<Record<string, unknown>>): PriceLine[] {
  const lines: PriceLine[] = [];
  for (const [member, value] of Object.entries(pricing)) {
    if (typeof value === 'number') {
      lines.push({ minor: value, unit: UNITS[member] ?? '{member}', values: { member } });
    } else if (value !== null && typeof value === 'object') {
      for (const [variant, price] of Object.entries(value as Record<string, unknown>)) {
        if (typeof price === 'number') lines.push({ minor: price, unit: TABLES[member] ?? '{member} {variant}', values: { member, variant } });
      }
    }
  }
  return lines;
}

/** A usage quantity's unit name (a pricing line's `units` key) as an English text for the i18n. */
const QUANTITIES: Readonly<Record<string, string>> = {
  input_tokens: 'input tokens',
  cached_input_tokens: 'cached input tokens',
  output_tokens: 'output tokens',
  output_audio_tokens: 'output audio tokens',
  images: 'images',
  seconds: 'seconds',
  searches: 'searches',
  sessions: 'sessions',
  duration_ms: 'milliseconds of audio',
  estimate: 'estimated charges',
};

/** Quantities in a steady order: the known units as listed above, then the others by name. */
export function byQuantityOrder(a: string, b: string): number {
  const known = Object.keys(QUANTITIES);
  const rank = (name: string) => (known.includes(name) ? known.indexOf(name) : known.length);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

export function quantityUnit(name: string): { text: string; values?: Record<string, string> } {
  const known = QUANTITIES[name];
  if (known) return { text: known };
  const tool = /^(.+)_calls$/.exec(name);
  if (tool) return { text: '{tool} calls', values: { tool: tool[1]! } };
  return { text: '{name}', values: { name } };
}
