import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { api, ApiFailure, type ListBody } from './api';
import { onChange, pollLater } from './fresh';
import { dateTimeText, yuanText } from './format';
import { useI18n } from './i18n';
import { useAccount } from './account-context';
import { appended, loadItems, pageUrl, reloadCount, type Loaded } from './paged-list';

/**
 * Loads data for a page, and keeps it fresh (web/src/fresh.ts): it loads again after any change
 * the dashboard makes, when the tab becomes visible again, and every POLL_MS while
 * `options.pollWhile(data)` says something shown is still running (an audit, a task). The data
 * shown stays until the new load answers, so a reload never blanks the page. `reload` loads again
 * at once (a Refresh button). `options.once` loads only once per visit of the page (and again when
 * `deps` change): for a costly load that serves as a lookup rather than as what the page is about
 * (the Revenue page's names of every account), which is not worth loading on every change or focus.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  options: { pollWhile?: (data: T) => boolean; once?: boolean } = {},
): { data: T | null; error: string | null; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [round, setRound] = useState(0);
  const [settled, setSettled] = useState(0);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const run = useCallback(load, deps);
  const once = options.once === true;
  useEffect(() => (once ? undefined : onChange(reload)), [reload, once]);
  useEffect(() => {
    let current = true;
    run()
      .then(
        (value) => current && (setData(value), setError(null)),
        (err: unknown) => current && setError(err instanceof Error ? err.message : String(err)),
      )
      .finally(() => current && setSettled((n) => n + 1));
    return () => {
      current = false;
    };
  }, [run, round]);
  const running = data !== null && options.pollWhile !== undefined && options.pollWhile(data);
  // Each answer schedules the next look, so polls never overlap and stop with the last running thing.
  useEffect(() => (running ? pollLater(reload) : undefined), [running, settled, reload]);
  return { data, error, reload };
}

/**
 * A paged list (web/src/paged-list.ts) at `path`, `pageSize` items a page, kept fresh as `useLoad`
 * keeps any load: every reload (a change, the tab shown again, a poll while `pollWhile(items)`)
 * loads it again from its start as far as it was shown, so later pages follow changes as the first
 * does. `more` loads the page after the items shown ("Load more"); null once the list is shown to
 * its end.
 */
export function usePagedList<T>(
  path: string,
  pageSize: number,
  options: { pollWhile?: (items: readonly T[]) => boolean } = {},
): { items: readonly T[] | null; error: string | null; more: (() => Promise<void>) | null; reload: () => void } {
  // What is shown, read by the next reload for how far to load; a list of another path starts again at one page.
  const shown = useRef<{ path: string; list: Loaded<T> } | null>(null);
  const { pollWhile } = options;
  const loaded = useLoad(
    async () => {
      const before = shown.current?.path === path ? shown.current.list : null;
      const list = await loadItems((after, limit) => api.get<ListBody<T>>(pageUrl(path, after, limit)), reloadCount(before, pageSize));
      return { path, list };
    },
    [path, pageSize],
    pollWhile ? { pollWhile: (data) => pollWhile(data.list.items) } : {},
  );
  // Pages added by "Load more" extend the load they were asked on; a newer load replaces them, as it holds them.
  const [extended, setExtended] = useState<{ base: Loaded<T>; list: Loaded<T> } | null>(null);
  const base = loaded.data?.list ?? null;
  const list = extended !== null && extended.base === base ? extended.list : base;
  shown.current = loaded.data !== null && list !== null ? { path: loaded.data.path, list } : null;
  const cursor = list?.next ?? null;
  const more =
    base !== null && list !== null && cursor !== null
      ? async () => {
          const page = await api.get<ListBody<T>>(pageUrl(path, cursor, pageSize));
          setExtended({ base, list: appended(list, cursor, page) });
        }
      : null;
  return { items: list?.items ?? null, error: loaded.error, more, reload: loaded.reload };
}

/** The "Load more" of a paged list (`usePagedList`), while it has more; its failure shows beside it. */
export function LoadMore({ more }: { more: (() => Promise<void>) | null }) {
  const { t } = useI18n();
  const action = useAction();
  if (more === null) return null;
  return (
    <>
      <p>
        <button type="button" disabled={action.busy} onClick={() => void action.run(more)}>
          {t('Load more')}
        </button>
      </p>
      <ErrorNote error={action.error} />
    </>
  );
}

/** Runs an action a button started; its failure is shown next to it, never thrown away. */
export function useAction(): { busy: boolean; error: string | null; run: (action: () => Promise<void>) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return {
    busy,
    error,
    async run(action) {
      setBusy(true);
      setError(null);
      try {
        await action();
      } catch (err) {
        setError(err instanceof ApiFailure ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err));
      } finally {
        setBusy(false);
      }
    },
  };
}

export function Money({ minor }: { minor: number | null | undefined }) {
  if (minor === null || minor === undefined) return <span>—</span>;
  return <span className="money">{yuanText(minor)}</span>;
}

/** The zone a page dates in: the one given, else the account's (the operator's account page provides the account shown), else UTC. */
export function useZone(timeZone?: string): string {
  const account = useAccount();
  return timeZone ?? account?.settings.timezone ?? 'UTC';
}

/** An instant in the account's time zone (the operator's pages pass the zone of the account shown). */
export function When({ iso, timeZone }: { iso: string | null | undefined; timeZone?: string }) {
  const { locale } = useI18n();
  const zone = useZone(timeZone);
  return <time dateTime={iso ?? undefined}>{dateTimeText(iso, zone, locale)}</time>;
}

/** Names the zone a page's times and day filters are in ("Times and days in Asia/Shanghai"): the account's, unless given. */
export function ZoneNote({ timeZone }: { timeZone?: string }) {
  const { t } = useI18n();
  const zone = useZone(timeZone);
  return (
    <p className="muted zone-note" data-testid="zone-note">
      {t('Times and days in {zone}', { zone })}
    </p>
  );
}

export function ErrorNote({ error }: { error: string | null }) {
  return error ? (
    <p className="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Section({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section className="card" aria-label={title}>
      <div className="card-head">
        <h2>{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

export function Loading() {
  const { t } = useI18n();
  return <p className="muted">{t('Loading…')}</p>;
}

export function Field({ label, children }: { label: string; children: ReactNode }) {
  return (
    <label className="field">
      <span>{label}</span>
      {children}
    </label>
  );
}

/**
 * A table too wide for a narrow screen scrolls sideways inside its card instead of widening the
 * page; the region is focusable so the keyboard can scroll it, and named for screen readers.
 */
export function TableScroll({ label, children }: { label?: string; children: ReactNode }) {
  const { t } = useI18n();
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={label ?? t('Scrollable table')}>
      {children}
    </div>
  );
}
