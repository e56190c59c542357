/**
 * The credentials the simulated providers accept: the placeholders of the checked-in channels
 * file (deploy/channels.example.json), which the fallback sends unchanged. Anything else is
 * refused as the provider refuses it (each provider module answers in its own error shape).
 */
import fs from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../src/package-root';
import { verifyAcs3, type Acs3Verdict } from '../../src/upstreams/auth/acs3-signature';
import { verifyVolcengine, type VolcengineRefusal } from '../../src/upstreams/auth/volcengine-signature';
import type { SimContext } from '../route';

interface ExampleEntry {
  readonly name: string;
  readonly protocol?: string;
  readonly api_key?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly volcengine?: { readonly access_key_id: string; readonly secret_access_key: string };
  readonly alibaba?: { readonly access_key_id: string; readonly access_key_secret: string };
}

let entries: readonly ExampleEntry[] | undefined;
function exampleEntries(): readonly ExampleEntry[] {
  entries ??= JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'deploy', 'channels.example.json'), 'utf8')) as ExampleEntry[];
  return entries;
}

/** Whether the request carries `Authorization: Bearer <key>` with a key the file gives a channel of `protocol`. */
export function hasAcceptedBearer(ctx: SimContext, protocol: string): boolean {
  const match = /^Bearer (.+)$/.exec(ctx.req.headers.authorization ?? '');
  return match !== null && exampleEntries().some((e) => (e.protocol ?? 'openai') === protocol && e.api_key === match[1]);
}

/** Whether the request carries every header (names case-insensitive, values exact) of one `headers` entry the file gives a channel of `protocol`. */
export function hasAcceptedHeaders(ctx: SimContext, protocol: string): boolean {
  return exampleEntries().some(
    (e) => (e.protocol ?? 'openai') === protocol && e.headers !== undefined && Object.entries(e.headers).every(([name, value]) => ctx.req.headers[name.toLowerCase()] === value),
  );
}

/**
 * Volcengine's signature check of a received request (the route must read its body `raw`), with
 * the file's access keys as the provider's known keys.
 */
export function volcengineSignatureCheck(ctx: SimContext, now: Date = new Date()): VolcengineRefusal {
  const url = new URL(ctx.req.url ?? '/', 'http://simulator');
  const headers = Object.fromEntries(Object.entries(ctx.req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
  return verifyVolcengine(
    { method: ctx.req.method ?? 'GET', pathname: url.pathname, query: Object.fromEntries(ctx.query), headers, ...(ctx.rawBody && ctx.rawBody.length > 0 ? { body: ctx.rawBody } : {}) },
    { secretOf: (id) => exampleEntries().find((e) => e.volcengine?.access_key_id === id)?.volcengine?.secret_access_key, now },
  );
}

/** How long a signature nonce is remembered: the signature's accepted clock skew, either way. */
const NONCE_MEMORY_MS = 30 * 60_000;
const seenNonces = new Map<string, number>();

/** Whether an ACS3 signature nonce was seen before (remembering this one): Alibaba Cloud refuses a replay. */
function nonceSeen(nonce: string, now: number): boolean {
  for (const [old, at] of seenNonces) {
    if (now - at < NONCE_MEMORY_MS) break;
    seenNonces.delete(old);
  }
  if (seenNonces.has(nonce)) return true;
  seenNonces.set(nonce, now);
  return false;
}

/**
 * Alibaba Cloud's ACS3 signature check of a received request (the route must read its body `raw`),
 * with the file's `alibaba` AccessKeys as the provider's known keys and its nonces remembered.
 */
export function acs3SignatureCheck(ctx: SimContext, now: Date = new Date()): Acs3Verdict {
  const url = new URL(ctx.req.url ?? '/', 'http://simulator');
  const headers = Object.fromEntries(Object.entries(ctx.req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
  return verifyAcs3(
    { method: ctx.req.method ?? 'GET', pathname: url.pathname, query: Object.fromEntries(ctx.query), headers, ...(ctx.rawBody && ctx.rawBody.length > 0 ? { body: ctx.rawBody } : {}) },
    { secretOf: (id) => exampleEntries().find((e) => e.alibaba?.access_key_id === id)?.alibaba?.access_key_secret, now, nonceSeen: (nonce) => nonceSeen(nonce, now.getTime()) },
  );
}

/**
 * The Tingwu project AppKeys the simulated Tingwu knows: the `upstream_model` of the built-in
 * catalog's models on a channel of `protocol` in the checked-in channels file (its placeholder,
 * which the fallback sends unchanged), as an account's projects are known to Tingwu.
 */
export function catalogUpstreamModels(protocol: string): ReadonlySet<string> {
  const channels = new Set(exampleEntries().filter((e) => e.protocol === protocol).map((e) => e.name));
  const catalog = JSON.parse(fs.readFileSync(path.join(PACKAGE_ROOT, 'src', 'billing', 'catalog.json'), 'utf8')) as { models: { channel: string; capabilities?: { upstream_model?: string } }[] };
  return new Set(catalog.models.flatMap((m) => (channels.has(m.channel) && m.capabilities?.upstream_model ? [m.capabilities.upstream_model] : [])));
}
