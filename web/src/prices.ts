import { perUnitText, type Translate } from './units';

/**
 * A catalog model's `pricing` (minor units, as the catalog file states it) as lines a person reads:
 * a price, the usage unit and quantity it is for (as a settlement's pricing names them), and the
 * variant of a price table (a video's resolution). A member no model type defines yet keeps its
 * own name (`unit` null).
 */
export interface PriceLine {
  readonly minor: number;
  readonly member: string;
  readonly unit: string | null;
  readonly per: number;
  readonly variant?: string;
  readonly withReferenceVideo?: boolean;
}

/** The unit and quantity of each price member the catalog's model types define (src/*\/model-type*.ts). */
const MEMBERS: Readonly<Record<string, { readonly unit: string; readonly per: number }>> = {
  input_per_million: { unit: 'input_tokens', per: 1_000_000 },
  cached_input_per_million: { unit: 'cached_input_tokens', per: 1_000_000 },
  output_per_million: { unit: 'output_tokens', per: 1_000_000 },
  output_audio_per_million: { unit: 'output_audio_tokens', per: 1_000_000 },
  per_image: { unit: 'images', per: 1 },
  per_query: { unit: 'searches', per: 1 },
  per_session: { unit: 'sessions', per: 1 },
  per_second: { unit: 'seconds', per: 1 },
  rate_per_hour: { unit: 'duration_ms', per: 3_600_000 },
};

/** A price table's line for one variant: a video's seconds at a resolution, or a tool's calls. */
function tableLine(member: string, variant: string, minor: number): PriceLine {
  switch (member) {
    case 'per_second':
      return { minor, member, unit: 'seconds', per: 1, variant };
    case 'per_second_with_reference_video':
      return { minor, member, unit: 'seconds', per: 1, variant, withReferenceVideo: true };
    case 'tool_call_prices':
      return { minor, member, unit: `${variant}_calls`, per: 1 };
    default:
      return { minor, member, unit: null, per: 1, variant };
  }
}

export function priceLines(pricing: Readonly<Record<string, unknown>>): PriceLine[] {
  const lines: PriceLine[] = [];
  for (const [member, value] of Object.entries(pricing)) {
    if (typeof value === 'number') {
      const known = MEMBERS[member];
      lines.push(known ? { minor: value, member, ...known } : { minor: value, member, unit: null, per: 1 });
    } else if (value !== null && typeof value === 'object') {
      for (const [variant, price] of Object.entries(value as Record<string, unknown>)) {
        if (typeof price === 'number') lines.push(tableLine(member, variant, price));
      }
    }
  }
  return lines;
}

/** What a price is for, in words: "per 1M input tokens", "per second at 720p", "per web_search call". */
export function priceUnitText(line: PriceLine, t: Translate, locale: string): string {
  if (line.unit === null) return line.variant === undefined ? line.member : `${line.member} ${line.variant}`;
  const price = perUnitText(line.unit, line.per, t, locale);
  if (line.variant === undefined) return price;
  return t(line.withReferenceVideo ? '{price} at {variant} with a reference video' : '{price} at {variant}', { price, variant: line.variant });
}
