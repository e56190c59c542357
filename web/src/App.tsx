import { Component, lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState, type ComponentType, type FormEvent, type LazyExoticComponent, type ReactNode } from 'react';
import { api, ApiFailure, rememberSession, whenSessionEnds, type Session } from './api';
import { AccountContext, type AccountView } from './account-context';
import { I18nContext, initialLanguage, makeI18n, saveLanguage, useI18n, type Language } from './i18n';
import { ErrorNote, Field, Loading, useLoad } from './ui';
import { navigate, usePath, Link } from './router';

/** What a page is given: the `:name` parts of its path. */
interface PageProps {
  readonly params: Readonly<Record<string, string>>;
}

/** A page module's named export, loaded with its own chunk the first time the page is shown. */
function lazyPage<K extends string>(load: () => Promise<Record<K, ComponentType<PageProps>>>, name: K): LazyExoticComponent<ComponentType<PageProps>> {
  return lazy(() => load().then((module) => ({ default: module[name] })));
}

interface PageRoute {
  /** `/ledger`, or with a parameter `/accounts/:id`. */
  readonly path: string;
  /** Shown in the navigation when given. */
  readonly label?: string;
  readonly page: LazyExoticComponent<ComponentType<PageProps>>;
}

// Adding a page is one line here; the first entry is also shown for a path no entry matches.
const ACCOUNT_PAGES: readonly PageRoute[] = [
  { path: '/', label: 'Overview', page: lazyPage(() => import('./pages/Overview'), 'Overview') },
  { path: '/ledger', label: 'Ledger', page: lazyPage(() => import('./pages/Ledger'), 'Ledger') },
  { path: '/usage', label: 'Usage', page: lazyPage(() => import('./pages/Usage'), 'Usage') },
  { path: '/keys', label: 'Keys', page: lazyPage(() => import('./pages/Keys'), 'Keys') },
  { path: '/settings', label: 'Webhooks & settings', page: lazyPage(() => import('./pages/Settings'), 'Settings') },
  { path: '/tasks', label: 'Tasks', page: lazyPage(() => import('./pages/Tasks'), 'Tasks') },
  { path: '/gallery', label: 'Gallery', page: lazyPage(() => import('./pages/Gallery'), 'Gallery') },
  { path: '/playground', label: 'Playground', page: lazyPage(() => import('./pages/Playground'), 'Playground') },
];

const OPERATOR_PAGES: readonly PageRoute[] = [
  { path: '/accounts', label: 'Accounts', page: lazyPage(() => import('./pages/Accounts'), 'Accounts') },
  { path: '/accounts/:id', page: lazy(() => import('./pages/AccountDetail').then(({ AccountDetail }) => ({ default: ({ params }: PageProps) => <AccountDetail accountId={params.id!} /> }))) },
  { path: '/revenue', label: 'Revenue & usage', page: lazyPage(() => import('./pages/Revenue'), 'Revenue') },
  { path: '/channels', label: 'Channels', page: lazyPage(() => import('./pages/Channels'), 'Channels') },
  { path: '/operations', label: 'Operations', page: lazyPage(() => import('./pages/Operations'), 'Operations') },
  { path: '/requests', label: 'Request log', page: lazyPage(() => import('./pages/Requests'), 'Requests') },
  { path: '/all-keys', label: 'All keys', page: lazyPage(() => import('./pages/AllKeys'), 'AllKeys') },
];

/** The `:name` parts of `path` when it matches `pattern`, else null. */
function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i]!.startsWith(':')) {
      if (got[i] === '') return null;
      params[want[i]!.slice(1)] = decodeURIComponent(got[i]!);
    } else if (want[i] !== got[i]) return null;
  }
  return params;
}

function Pages({ routes }: { routes: readonly PageRoute[] }) {
  const path = usePath();
  let found: { route: PageRoute; params: Record<string, string> } = { route: routes[0]!, params: {} };
  for (const route of routes) {
    const params = match(route.path, path);
    if (params) {
      found = { route, params };
      break;
    }
  }
  const Page = found.route.page;
  return (
    <PageFailure key={path}>
      <Suspense fallback={<Loading />}>
        <Page params={found.params} />
      </Suspense>
    </PageFailure>
  );
}

/**
 * A page whose chunk did not load (the network failed, or the gateway now serves a newer build
 * whose files have other names) says so with a way to reload, instead of blanking the app; a
 * move to another page tries again.
 */
class PageFailure extends Component<{ children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };
  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }
  override render(): ReactNode {
    return this.state.failed ? <PageFailed /> : this.props.children;
  }
}

function PageFailed() {
  const { t } = useI18n();
  return (
    <div role="alert">
      <p className="error">{t('This page could not be loaded; the dashboard may have been updated.')}</p>
      <button type="button" onClick={() => window.location.reload()}>
        {t('Reload the dashboard')}
      </button>
    </div>
  );
}

export function App() {
  const [language, setLanguage] = useState<Language>(initialLanguage);
  const i18n = useMemo(() => makeI18n(language), [language]);
  const [session, setSession] = useState<Session | null | 'unknown'>('unknown');

  useEffect(() => {
    document.documentElement.lang = i18n.language === 'zh' ? 'zh-CN' : 'en';
    document.title = i18n.t('Gateway dashboard');
  }, [i18n]);

  const signedOut = useCallback(() => {
    rememberSession(null);
    setSession(null);
  }, []);

  useEffect(() => {
    whenSessionEnds(signedOut);
    // 204 (undefined) when the browser holds no session cookie.
    api.get<Session | undefined>('/session').then(
      (s) => {
        rememberSession(s ?? null);
        setSession(s ?? null);
      },
      () => setSession(null),
    );
  }, [signedOut]);

  // The owner's account, kept fresh: a change of its time zone redates every page at once.
  const owner = session !== 'unknown' && session?.kind === 'account' ? session.account_id : null;
  const loaded = useLoad(() => (owner ? api.get<AccountView>('/v1/account') : Promise.resolve(null)), [owner]);
  const account = owner && loaded.data?.id === owner ? loaded.data : null;

  const switchLanguage = (next: Language) => {
    saveLanguage(next);
    setLanguage(next);
  };

  return (
    <I18nContext.Provider value={i18n}>
      <AccountContext.Provider value={account}>
        <Shell session={session === 'unknown' ? null : session} language={language} onLanguage={switchLanguage} onSignedOut={signedOut}>
          {session === 'unknown' ? null : session === null ? (
            <SignIn
              onSignedIn={(s) => {
                rememberSession(s);
                setSession(s);
                navigate(s.kind === 'operator' ? '/accounts' : '/');
              }}
            />
          ) : session.kind === 'operator' ? (
            <Pages routes={OPERATOR_PAGES} />
          ) : account ? (
            <Pages routes={ACCOUNT_PAGES} />
          ) : null}
        </Shell>
      </AccountContext.Provider>
    </I18nContext.Provider>
  );
}

function Shell({
  session,
  language,
  onLanguage,
  onSignedOut,
  children,
}: {
  session: Session | null;
  language: Language;
  onLanguage: (l: Language) => void;
  onSignedOut: () => void;
  children: ReactNode;
}) {
  const { t } = useI18n();
  const pages = session?.kind === 'operator' ? OPERATOR_PAGES : session ? ACCOUNT_PAGES : [];
  const signOut = async () => {
    await api.delete('/session').catch(() => undefined);
    onSignedOut();
    navigate('/');
  };
  return (
    <div className="shell">
      <header className="top">
        <span className="brand">{t('Gateway dashboard')}</span>
        <div className="top-actions">
          <label className="language">
            <span className="visually-hidden">{t('Language')}</span>
            <select value={language} onChange={(e) => onLanguage(e.target.value as Language)} aria-label={t('Language')}>
              <option value="en">English</option>
              <option value="zh">中文</option>
            </select>
          </label>
          {session && (
            <button type="button" onClick={signOut}>
              {t('Sign out')}
            </button>
          )}
        </div>
      </header>
      {pages.length > 0 && <Navigation pages={pages} />}
      <main>{children}</main>
    </div>
  );
}

/**
 * The pages' links; at 720 px and narrower (styles.css) they fold behind a menu button, which
 * Escape and choosing a page close again.
 */
function Navigation({ pages }: { pages: readonly PageRoute[] }) {
  const { t } = useI18n();
  const path = usePath();
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => setOpen(false), [path]);
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      button.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);
  return (
    <nav aria-label={t('Pages')} className={open ? 'nav open' : 'nav'}>
      <button type="button" className="menu-button" ref={button} aria-expanded={open} aria-controls="nav-pages" onClick={() => setOpen(!open)}>
        <span aria-hidden="true">☰ </span>
        {t('Menu')}
      </button>
      <ul id="nav-pages">
        {pages
          .filter((page) => page.label !== undefined)
          .map(({ path: to, label }) => (
            <li key={to}>
              <Link to={to} current={to === '/' ? path === '/' : path === to || path.startsWith(`${to}/`)}>
                {t(label!)}
              </Link>
            </li>
          ))}
      </ul>
    </nav>
  );
}

function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const { t } = useI18n();
  const [secret, setSecret] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await api.post<Session>('/session', { secret });
      setSecret('');
      onSignedIn(session);
    } catch (err) {
      setError(err instanceof ApiFailure && err.status === 429 ? t('Too many failed sign-ins from this address; try again later.') : t('Sign-in failed: that is neither an API key of an account nor the admin token.'));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">{t('Sign in')}</h1>
      <p className="muted">{t('Account owners sign in with one of the account’s API keys; operators with the admin token. The secret is exchanged for a session and is not kept by the browser.')}</p>
      <form onSubmit={submit}>
        <Field label={t('API key or admin token')}>
          <input type="password" autoComplete="off" value={secret} onChange={(e) => setSecret(e.target.value)} required name="secret" />
        </Field>
        <button type="submit" disabled={busy || secret === ''}>
          {t('Sign in')}
        </button>
      </form>
      <ErrorNote error={error} />
    </section>
  );
}
