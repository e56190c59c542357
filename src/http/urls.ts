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
