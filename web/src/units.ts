import { countText } from './format';

/** The dashboard's translation function (i18n.tsx), as a type of its own so plain modules need no React. */
export type Translate = (text: string, values?: Record<string, string | number>) => string;

/**
 * The words for a usage unit (a pricing line's `units` key, a usage row's, an answer's `usage`
 * member): `many` after a count ("1,200 input tokens"), `one` after "per" ("per image"). English
 * texts for the i18n; their Chinese is in zh-units.ts. The order here is the order units are shown.
 */
const WORDS: Readonly<Record<string, { readonly many: string; readonly one: string }>> = {
  input_tokens: { many: 'input tokens', one: 'input token' },
  cached_input_tokens: { many: 'cached input tokens', one: 'cached input token' },
  output_tokens: { many: 'output tokens', one: 'output token' },
  output_audio_tokens: { many: 'output audio tokens', one: 'output audio token' },
  images: { many: 'images', one: 'image' },
  seconds: { many: 'seconds', one: 'second' },
  duration_ms: { many: 'milliseconds of audio', one: 'millisecond of audio' },
  searches: { many: 'searches', one: 'search' },
  sessions: { many: 'sessions', one: 'session' },
  estimate: { many: 'estimated charges', one: 'estimated charge' },
  prompt_tokens: { many: 'prompt tokens', one: 'prompt token' },
  completion_tokens: { many: 'completion tokens', one: 'completion token' },
  total_tokens: { many: 'total tokens', one: 'total token' },
  generated_images: { many: 'generated images', one: 'generated image' },
};

/** The unit names this module has words for (the rest read as their names, or as tool calls). */
export const KNOWN_UNITS: readonly string[] = Object.keys(WORDS);

/** Units in a steady order: the known ones as listed above, then the others by name. */
export function byUnitOrder(a: string, b: string): number {
  const rank = (name: string) => (name in WORDS ? KNOWN_UNITS.indexOf(name) : KNOWN_UNITS.length);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** A unit's name for people after a count: "input tokens", "web_search calls", else the name with spaces. */
export function unitLabel(unit: string, t: Translate): string {
  const known = WORDS[unit];
  if (known) return t(known.many);
  const tool = /^(.+)_calls$/.exec(unit);
  if (tool) return t('{tool} calls', { tool: tool[1]! });
  return unit.replace(/_/g, ' ');
}

/** Counted quantities ("1,200 input tokens · 300 output tokens"), known units first; "—" for none. */
export function unitsText(units: Readonly<Record<string, number>> | null, t: Translate, locale: string): string {
  const entries = Object.entries(units ?? {}).sort(([a], [b]) => byUnitOrder(a, b));
  return entries.length === 0 ? '—' : entries.map(([unit, count]) => `${countText(count, locale)} ${unitLabel(unit, t)}`).join(' · ');
}

const HOUR_MS = 3_600_000;

/** A unit price's quantity, short, after the price: "/M" (per million), "/K", "/h" (an hour of milliseconds); nothing per one. */
export function perSuffix(unit: string, per: number, locale: string): string {
  if (per === 1) return '';
  if (unit === 'duration_ms' && per === HOUR_MS) return '/h';
  if (per === 1_000) return '/K';
  if (per === 1_000_000) return '/M';
  return `/${countText(per, locale)}`;
}

/** A unit price's quantity in words: "per image", "per 1M input tokens", "per hour of audio", "per web_search call". */
export function perUnitText(unit: string, per: number, t: Translate, locale: string): string {
  if (unit === 'duration_ms' && per === HOUR_MS) return t('per hour of audio');
  const known = WORDS[unit];
  const tool = /^(.+)_calls$/.exec(unit);
  if (per === 1) {
    if (known) return t('per {unit}', { unit: t(known.one) });
    if (tool) return t('per {tool} call', { tool: tool[1]! });
    return t('per {unit}', { unit: unit.replace(/_/g, ' ') });
  }
  const many = unitLabel(unit, t);
  if (per === 1_000_000) return t('per 1M {unit}', { unit: many });
  if (per === 1_000) return t('per 1K {unit}', { unit: many });
  return t('per {count} {unit}', { count: countText(per, locale), unit: many });
}
