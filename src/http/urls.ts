import { nonPublicHost } from './public-address';

/**
 * The one parser of URLs a client gives (callbacks, media and file links): absolute, `http://` or
 * `https://` (the scheme in any case), with a host, and parseable. Null for anything else
 * (`http://a:99999/`, `http://[::1`, `http://user@/`, `ftp://…`), so callers answer 400 instead
 * of throwing; each caller adds its own rules (https only, public hosts) on the result.
 */
export function parseHttpUrl(value: string): URL | null {
  if (!/^https?:\/\/[^\s/$.?#][^\s]*$/i.test(value)) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' ? url : null;
}

/**
 * How a URL a client hands the gateway to be fetched (by the gateway or a provider) must be:
 * `https` where the spec says "publicly reachable https URL", and on a public host (the one address
 * rule, src/http/public-address.ts) unless the deployment allows private targets.
 */
export interface ClientUrlRule {
  readonly httpsOnly: boolean;
  readonly allowPrivateTargets: boolean;
  /** What else the field takes, for the message (`asset://<id>`). */
  readonly alternative?: string;
}

/** Why a client's URL breaks its rule, as a message naming the field (`param`); null when it keeps it. */
export function clientUrlProblem(value: string, param: string, rule: ClientUrlRule): string | null {
  const expected = `${param} must be a publicly reachable ${rule.httpsOnly ? 'https' : 'http(s)'} URL${rule.alternative ? ` (or ${rule.alternative})` : ''}`;
  const url = parseHttpUrl(value);
  if (!url || (rule.httpsOnly && url.protocol !== 'https:')) return expected;
  const why = rule.allowPrivateTargets ? null : nonPublicHost(url.hostname);
  return why ? `${expected}, not ${why}` : null;
}
