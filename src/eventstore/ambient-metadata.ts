import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventMetadata } from './port';

/**
 * Metadata that every event appended on behalf of one HTTP request carries, whatever code path
 * appends it: the dashboard says so here (`{via: 'dashboard', session_id}`) once, instead of every
 * route that changes something passing it along. A getter, because the request's session is known
 * only after the route guard has checked it.
 */
const ambient = new AsyncLocalStorage<() => EventMetadata>();

export function withAmbientMetadata<T>(metadata: () => EventMetadata, fn: () => T): T {
  return ambient.run(metadata, fn);
}

export function ambientMetadata(): EventMetadata {
  return ambient.getStore()?.() ?? {};
}

/**
 * Runs `fn` with no ambient metadata: work started by one request on behalf of many (a group
 * commit appending other requests' events) must not stamp the first request's origin on all.
 */
export function outsideAmbientMetadata<T>(fn: () => T): T {
  return ambient.exit(fn);
}
