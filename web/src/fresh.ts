/**
 * Fresh data on every screen, by one rule: whatever a screen shows is loaded again when it may
 * have changed. web/src/api.ts reports each change and `useLoad` (web/src/ui.tsx) listens; a page
 * gets all of this by loading its data with `useLoad`, and never calls this module itself.
 *
 * - After every successful state change through web/src/api.ts (POST, PATCH, PUT, DELETE), every
 *   mounted `useLoad` loads again: a credit changes the balance, the statement, the ledger and the
 *   usage at once, a key change every list or filter of keys, and no page has to know which.
 *   A change is a person's click, and a screen holds a handful of loads, so reloading them all
 *   costs a few GETs and can never miss one.
 * - Other tabs of the same dashboard hear of the change too (BroadcastChannel).
 * - A tab that becomes visible again loads everything again (changes made elsewhere meanwhile).
 * - While a load says something is still running (`pollWhile`), it polls every POLL_MS, only
 *   while the tab is visible.
 */

/** How often a running thing (an audit, a task) is looked at again. */
export const POLL_MS = 1500;

type Listener = () => void;
const listeners = new Set<Listener>();

const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('dashboard-changes') : null;

function notify(): void {
  for (const listener of [...listeners]) listener();
}

/** Something changed: every mounted load, here and in the dashboard's other tabs, loads again. */
export function invalidate(): void {
  notify();
  channel?.postMessage('changed');
}

channel?.addEventListener('message', notify);
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') notify();
});

/** Calls `listener` on every change; returns the unsubscribe. */
export function onChange(listener: Listener): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** Calls `poll` once after POLL_MS if the tab is then visible (a hidden tab is caught up on `visibilitychange`); returns the cancel. */
export function pollLater(poll: () => void): () => void {
  const timer = window.setTimeout(() => {
    if (document.visibilityState === 'visible') poll();
  }, POLL_MS);
  return () => window.clearTimeout(timer);
}
