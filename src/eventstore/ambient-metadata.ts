import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventMetadata } from './port';

/**
 * Metadata that every event appended on behalf of one HTTP request carries, whatever code path
 * appends it: the dashboard says so here (`{via: 'dashboard', session_id}`) once, instead of every
 * route that changes something passing it along. A getter, because the request's session is known
 * only after the route guard has checked it.
 */
const ambient = new AsyncLocalStorage<() => EventMetadata>();

/** Calls of withAmbientMetadata not yet settled. */
let running = 0;

/**
 * Runs `fn` (sync, or returning a promise) with `metadata` as the ambient metadata, until it
 * returns or its promise settles. Work it started that goes on after that (a timer, a connection
 * opened then, which keep the store Node.js gave them) reads no metadata: it is no longer on behalf
 * of that request.
 *
 * Node.js 20 keeps its promise hooks on for the life of the process once an AsyncLocalStorage has
 * run: every await of every request then costs more (a loop of awaits ran 2.4 times slower; a
 * streamed chat call 0.1 ms more at p50). So the storage is also disabled whenever no call is
 * running: the hooks stay off while nobody uses the dashboard.
 */
export function withAmbientMetadata<T>(metadata: () => EventMetadata, fn: () => T): T {
  running++;
  let ended = false;
  const end = (): void => {
    ended = true;
    running--;
    if (running === 0) ambient.disable();
  };
  let result: T;
  try {
    result = ambient.run(() => (ended ? {} : metadata()), fn);
  } catch (err) {
    end();
    throw err;
  }
  if (isThenable(result)) result.then(end, end);
  else end();
  return result;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
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
