import { useCallback, useEffect, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { api, ApiFailure, rememberSession, whenSessionEnds, type Session } from './api';
import { AccountContext, type AccountView } from './account-context';
import { I18nContext, initialLanguage, makeI18n, saveLanguage, useI18n, type Language } from './i18n';
import { ErrorNote, Field } from './ui';
import { navigate, usePath, Link } from './router';
import { Overview } from './pages/Overview';
import { Ledger } from './pages/Ledger';
import { Usage } from './pages/Usage';
import { Keys } from './pages/Keys';
import { Settings } from './pages/Settings';
import { Tasks } from './pages/Tasks';
import { Gallery } from './pages/Gallery';
import { Accounts } from './pages/Accounts';
import { AccountDetail } from './pages/AccountDetail';
import { Operations } from './pages/Operations';
import { Requests } from './pages/Requests';
import { AllKeys } from './pages/AllKeys';
import { Revenue } from './pages/Revenue';
import { Channels } from './pages/Channels';
import { Playground } from './pages/Playground';

const ACCOUNT_PAGES = [
  ['/', 'Overview'],
  ['/ledger', 'Ledger'],
  ['/usage', 'Usage'],
  ['/keys', 'Keys'],
  ['/settings', 'Webhooks & settings'],
  ['/tasks', 'Tasks'],
  ['/gallery', 'Gallery'],
  ['/playground', 'Playground'],
] as const;

const OPERATOR_PAGES = [
  ['/accounts', 'Accounts'],
  ['/revenue', 'Revenue & usage'],
  ['/channels', 'Channels'],
  ['/operations', 'Operations'],
  ['/requests', 'Request log'],
  ['/all-keys', 'All keys'],
] as const;

function accountPage(path: string): ReactNode {
  switch (path) {
    case '/ledger':
      return <Ledger />;
    case '/usage':
      return <Usage />;
    case '/keys':
      return <Keys />;
    case '/settings':
      return <Settings />;
    case '/tasks':
      return <Tasks />;
    case '/gallery':
      return <Gallery />;
    case '/playground':
      return <Playground />;
    default:
      return <Overview />;
  }
}

function operatorPage(path: string): ReactNode {
  const account = /^\/accounts\/([^/]+)$/.exec(path);
  if (account) return <AccountDetail accountId={decodeURIComponent(account[1]!)} />;
  if (path === '/operations') return <Operations />;
  if (path === '/requests') return <Requests />;
  if (path === '/all-keys') return <AllKeys />;
  if (path === '/revenue') return <Revenue />;
  if (path === '/channels') return <Channels />;
  return <Accounts />;
}

export function App() {
  const [language, setLanguage] = useState<Language>(initialLanguage);
  const i18n = useMemo(() => makeI18n(language), [language]);
  const [session, setSession] = useState<Session | null | 'unknown'>('unknown');
  const [account, setAccount] = useState<AccountView | null>(null);

  useEffect(() => {
    document.documentElement.lang = i18n.language === 'zh' ? 'zh-CN' : 'en';
    document.title = i18n.t('Gateway dashboard');
  }, [i18n]);

  const signedOut = useCallback(() => {
    rememberSession(null);
    setSession(null);
    setAccount(null);
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

  useEffect(() => {
    if (session === 'unknown' || session?.kind !== 'account') return;
    api.get<AccountView>('/v1/account').then(setAccount, () => undefined);
  }, [session]);

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
            <OperatorPages />
          ) : account ? (
            <AccountPages />
          ) : null}
        </Shell>
      </AccountContext.Provider>
    </I18nContext.Provider>
  );
}

function AccountPages() {
  const path = usePath();
  return <>{accountPage(path)}</>;
}

function OperatorPages() {
  const path = usePath();
  return <>{operatorPage(path)}</>;
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
  const path = usePath();
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
      {pages.length > 0 && (
        <nav aria-label={t('Pages')} className="nav">
          <ul>
            {pages.map(([to, label]) => (
              <li key={to}>
                <Link to={to} current={to === '/' ? path === '/' : path === to || path.startsWith(`${to}/`)}>
                  {t(label)}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
      )}
      <main>{children}</main>
    </div>
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
